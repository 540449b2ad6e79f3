/* corrupt.S: corrupt_barrier(v) (corrupt.c): rbp used as a general
 * register, holding v, across a call to barrier_call. No CFI: an unwinder
 * finds no rule here either. */
	.text
	.globl corrupt_barrier
	.type corrupt_barrier, @function
corrupt_barrier:
	push %rbp
	mov %rdi, %rbp
	call barrier_call
	pop %rbp
	ret
	.size corrupt_barrier, .-corrupt_barrier
	.section .note.GNU-stack,"",@progbits
