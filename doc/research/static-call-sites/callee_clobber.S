/* Test callee for t_redzone: records entry rsp%16 and its 6 arg registers,
 * scribbles 512 bytes of its own stack below the entry rsp, returns sum(args*k),
 * then clobbers every caller-saved GPR, xmm0-15 and the flags. */
	.text
	.globl sc_clobber_callee
	.type sc_clobber_callee,@function
sc_clobber_callee:
	.cfi_startproc
	mov %rsp, %rax
	and $15, %eax
	mov %eax, sc_entry_rsp_mod(%rip)
	mov %rdi, sc_seen_args(%rip)
	mov %rsi, sc_seen_args+8(%rip)
	mov %rdx, sc_seen_args+16(%rip)
	mov %rcx, sc_seen_args+24(%rip)
	mov %r8,  sc_seen_args+32(%rip)
	mov %r9,  sc_seen_args+40(%rip)
	/* result = a1 + 2*a2 + 3*a3 + 4*a4 + 5*a5 + 6*a6 */
	mov %rdi, %rax
	lea (%rax,%rsi,2), %rax
	imul $3, %rdx, %r10
	add %r10, %rax
	lea (%rax,%rcx,4), %rax
	imul $5, %r8, %r10
	add %r10, %rax
	imul $6, %r9, %r10
	add %r10, %rax
	mov %rax, sc_result(%rip)
	/* scribble own stack: [entry-512, entry) */
	sub $512, %rsp
	.cfi_adjust_cfa_offset 512
	mov %rsp, %rdi
	mov $512, %ecx
	mov $0xa5, %eax
	rep stosb
	add $512, %rsp
	.cfi_adjust_cfa_offset -512
	/* clobber all caller-saved GPRs except rax (result) */
	movabs $0xdead0000000000c1, %rcx
	movabs $0xdead0000000000d1, %rdx
	movabs $0xdead0000000000e1, %rsi
	movabs $0xdead0000000000f1, %rdi
	movabs $0xdead000000000008, %r8
	movabs $0xdead000000000009, %r9
	movabs $0xdead000000000010, %r10
	movabs $0xdead000000000011, %r11
	pcmpeqd %xmm0, %xmm0
	pcmpeqd %xmm1, %xmm1
	pcmpeqd %xmm2, %xmm2
	pcmpeqd %xmm3, %xmm3
	pcmpeqd %xmm4, %xmm4
	pcmpeqd %xmm5, %xmm5
	pcmpeqd %xmm6, %xmm6
	pcmpeqd %xmm7, %xmm7
	pcmpeqd %xmm8, %xmm8
	pcmpeqd %xmm9, %xmm9
	pcmpeqd %xmm10, %xmm10
	pcmpeqd %xmm11, %xmm11
	pcmpeqd %xmm12, %xmm12
	pcmpeqd %xmm13, %xmm13
	pcmpeqd %xmm14, %xmm14
	pcmpeqd %xmm15, %xmm15
	mov sc_result(%rip), %rax
	cmp %rcx, %rax            /* flags := something arbitrary */
	ret
	.cfi_endproc
	.size sc_clobber_callee, .-sc_clobber_callee

	.bss
	.globl sc_entry_rsp_mod, sc_seen_args, sc_result
	.balign 8
sc_entry_rsp_mod: .zero 8
sc_seen_args:     .zero 48
sc_result:        .zero 8
	.section .note.GNU-stack,"",@progbits
