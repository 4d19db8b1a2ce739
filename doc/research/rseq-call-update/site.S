/* switchyard rseq-guarded call-site prototype (own code; facts from kernel docs) */
	.section .text.sysite,"ax",@progbits
	.balign 4096
	.globl sy_site_fn, sy_mov, sy_guard, sy_call, sy_end
	.type sy_site_fn,@function
sy_site_fn:
	sub $8,%rsp                     /* 16-byte align for the call */
	lea sy_desc(%rip),%r11
sy_mov:
	/* mov %r11,%fs:disp32  (64 4c 89 1c 25 disp32); disp32 patched at start-up */
	.byte 0x64,0x4c,0x89,0x1c,0x25
	.long 0
sy_guard:                               /* rseq start_ip */
	.byte 0xa9                      /* a9 = test $imm32,%eax ; e9 = jmp rel32 */
	.long sy_jmp_entry - (sy_guard+5)
#ifdef WIDE
	.rept WIDE
	pause                           /* widen the section: a thread can sit between guard and call */
	.endr
#endif
sy_call:
	call sy_target_A                /* rel32 rewritten by the updater */
sy_end:                                 /* rseq post_commit_ip */
	add $8,%rsp
	ret
	/* abort handler: 4-byte signature then handler */
	.long 0x53053053
	.globl sy_abort
sy_abort:
	incq %fs:sy_nabort@tpoff
	jmp 1f
sy_jmp_entry:
	incq %fs:sy_njmp@tpoff
1:	call *sy_slot(%rip)
	jmp sy_end
	.size sy_site_fn,.-sy_site_fn

	/* same shape, plain direct call (baseline) */
	.globl sy_plain_fn
	.type sy_plain_fn,@function
sy_plain_fn:
	sub $8,%rsp
	call sy_target_A
	add $8,%rsp
	ret
	.size sy_plain_fn,.-sy_plain_fn

	/* targets far apart, surrounded by int3 so a torn rel32 traps */
	.section .text.sytgt,"ax",@progbits
	.balign 4096
	.fill 0x30000,1,0xcc
	.globl sy_target_A
sy_target_A:
	incq %fs:sy_cnt_a@tpoff
	ret
	.fill 0x30000,1,0xcc
	.globl sy_target_B
sy_target_B:
	incq %fs:sy_cnt_b@tpoff
	ret
	.fill 0x30000,1,0xcc

	.section .data.rel.ro,"aw",@progbits
	.balign 32
	.globl sy_desc
sy_desc:
	.long 0                 /* version */
	.long 0                 /* flags */
	.quad sy_guard          /* start_ip */
	.quad sy_end - sy_guard /* post_commit_offset */
	.quad sy_abort          /* abort_ip */

	.data
	.balign 8
	.globl sy_slot
sy_slot: .quad sy_target_A
	.section .note.GNU-stack,"",@progbits
