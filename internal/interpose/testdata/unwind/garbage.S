/* garbage.S: hand-written frames that lie to an unwinder (garbage.c).
 * Each calls the function in rdi and returns; label ret_<name> is its
 * return address. */
	.text

/* no_cfi_rbp(fn, value): no call-frame information, rbp = value (a
 * general register) during the call: the walk falls back to rbp. */
	.globl no_cfi_rbp, ret_no_cfi_rbp
	.type no_cfi_rbp, @function
no_cfi_rbp:
	push %rbp
	mov %rsi, %rbp
	call *%rdi
ret_no_cfi_rbp:
	pop %rbp
	ret
	.size no_cfi_rbp, .-no_cfi_rbp

/* fake_frame(fn, ra): no call-frame information, rbp -> a frame of its
 * own making on the stack: [rbp] = rbp (a loop), [rbp + 8] = ra. */
	.globl fake_frame, ret_fake_frame
	.type fake_frame, @function
fake_frame:
	push %rbp
	sub $16, %rsp
	mov %rsi, 8(%rsp)
	mov %rsp, (%rsp)
	mov %rsp, %rbp
	call *%rdi
ret_fake_frame:
	add $16, %rsp
	pop %rbp
	ret
	.size fake_frame, .-fake_frame

/* cfi_bad_ra(fn): call-frame information that puts the return address in
 * a slot holding garbage. */
	.globl cfi_bad_ra, ret_cfi_bad_ra
	.type cfi_bad_ra, @function
cfi_bad_ra:
	.cfi_startproc
	pushq $0x7eadbeef
	.cfi_adjust_cfa_offset 8
	.cfi_offset rip, -16
	call *%rdi
ret_cfi_bad_ra:
	add $8, %rsp
	.cfi_adjust_cfa_offset -8
	.cfi_offset rip, -8
	ret
	.cfi_endproc
	.size cfi_bad_ra, .-cfi_bad_ra

/* cfi_lying_rbp(fn): call-frame information that says CFA = rbp + 16
 * while rbp holds a general-purpose value. */
	.globl cfi_lying_rbp, ret_cfi_lying_rbp
	.type cfi_lying_rbp, @function
cfi_lying_rbp:
	.cfi_startproc
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -16
	movabs $0x5a5a5a5a5a5a, %rbp
	.cfi_def_cfa_register rbp
	call *%rdi
ret_cfi_lying_rbp:
	pop %rbp
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size cfi_lying_rbp, .-cfi_lying_rbp

/* cfi_huge_cfa(fn): a CFA far above the top of any stack. */
	.globl cfi_huge_cfa, ret_cfi_huge_cfa
	.type cfi_huge_cfa, @function
cfi_huge_cfa:
	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 0x40000000
	call *%rdi
ret_cfi_huge_cfa:
	add $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size cfi_huge_cfa, .-cfi_huge_cfa

/* honest_rbp(fn): rbp used as a general register, with true call-frame
 * information (rbp saved, CFA = rsp + 16): the walk goes on through it. */
	.globl honest_rbp, ret_honest_rbp
	.type honest_rbp, @function
honest_rbp:
	.cfi_startproc
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -16
	movabs $0x5a5a5a5a5a5a, %rbp
	call *%rdi
ret_honest_rbp:
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	ret
	.cfi_endproc
	.size honest_rbp, .-honest_rbp

	.section .note.GNU-stack,"",@progbits
