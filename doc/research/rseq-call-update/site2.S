/* variant: data-flag guard (no code flip except rel32) */
	.section .text.sysite2,"ax",@progbits
	.balign 4096
	.globl sy2_site_fn, sy2_mov, sy2_call, sy2_end, sy2_guard
	.type sy2_site_fn,@function
sy2_site_fn:
	sub $8,%rsp
	lea sy2_desc(%rip),%r11
sy2_mov:
	.byte 0x64,0x4c,0x89,0x1c,0x25
	.long 0
sy2_guard:                              /* rseq start_ip */
	cmpb $0,sy2_flag(%rip)
	jne sy2_jmp_entry
sy2_call:
	call sy_target_A
sy2_end:
	add $8,%rsp
	ret
	.long 0x53053053
sy2_abort:
	incq %fs:sy_nabort@tpoff
	jmp 1f
sy2_jmp_entry:
	incq %fs:sy_njmp@tpoff
1:	call *sy_slot(%rip)
	jmp sy2_end
	.size sy2_site_fn,.-sy2_site_fn
	.section .data.rel.ro,"aw",@progbits
	.balign 32
sy2_desc:
	.long 0, 0
	.quad sy2_guard, sy2_end - sy2_guard, sy2_abort
	.data
	.globl sy2_flag
sy2_flag: .byte 0
	.section .note.GNU-stack,"",@progbits
