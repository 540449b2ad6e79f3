/*
 * rma.c: one-sided communication on 2 ranks, every epoch kind. Each rank,
 * with the other rank as target:
 *  - window A (MPI_Win_create over 16 doubles, MPI_COMM_WORLD): a fence,
 *    then 5 times MPI_Put of 1 double and MPI_Get of 2 doubles, each
 *    closed by a fence (6 fences);
 *  - 5 lock epochs: MPI_Win_lock (exclusive), MPI_Accumulate of 1 double,
 *    MPI_Win_flush, MPI_Fetch_and_op of 1 double, MPI_Compare_and_swap of
 *    1 int64, MPI_Win_unlock;
 *  - one passive epoch on all: MPI_Win_lock_all, MPI_Get_accumulate (1
 *    double each way), MPI_Rput of 1 double + MPI_Wait, MPI_Win_flush_all,
 *    MPI_Win_unlock_all;
 *  - 3 general active target epochs: MPI_Win_post and MPI_Win_start with
 *    the other rank's group, MPI_Put of 1 double, MPI_Win_complete,
 *    MPI_Win_wait;
 *  - window B (MPI_Win_allocate of 8 doubles over a duplicate of
 *    MPI_COMM_WORLD): two fences, freed; then A freed.
 * Per rank: 9 puts, 5 gets, 16 atomics (5 accumulate, 5 fetch-and-op, 5
 * compare-and-swap, 1 get-accumulate), 8 fences, 2 windows.
 */
#include <mpi.h>
#include <stdint.h>

int main(int argc, char **argv)
{
	int rank;
	double buf[16] = {0}, one = 1, two[2] = {0}, res = 0;
	int64_t cmp = 0, swp = 1, old = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	MPI_Win a, b;
	MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &a);
	MPI_Win_fence(0, a);
	for (int i = 0; i < 5; i++) {
		MPI_Put(&one, 1, MPI_DOUBLE, peer, rank, 1, MPI_DOUBLE, a);
		MPI_Get(two, 2, MPI_DOUBLE, peer, 4, 2, MPI_DOUBLE, a);
		MPI_Win_fence(0, a);
	}
	for (int i = 0; i < 5; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, a);
		MPI_Accumulate(&one, 1, MPI_DOUBLE, peer, 8, 1, MPI_DOUBLE, MPI_SUM, a);
		MPI_Win_flush(peer, a);
		MPI_Fetch_and_op(&one, &res, MPI_DOUBLE, peer, 9, MPI_SUM, a);
		MPI_Compare_and_swap(&swp, &cmp, &old, MPI_INT64_T, peer, 10, a);
		MPI_Win_unlock(peer, a);
	}
	MPI_Request r;
	MPI_Win_lock_all(0, a);
	MPI_Get_accumulate(&one, 1, MPI_DOUBLE, &res, 1, MPI_DOUBLE, peer, 11, 1, MPI_DOUBLE, MPI_SUM, a);
	MPI_Rput(&one, 1, MPI_DOUBLE, peer, 12, 1, MPI_DOUBLE, a, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Win_flush_all(a);
	MPI_Win_unlock_all(a);
	MPI_Group world, other;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &peer, &other);
	for (int i = 0; i < 3; i++) {
		MPI_Win_post(other, 0, a);
		MPI_Win_start(other, 0, a);
		MPI_Put(&one, 1, MPI_DOUBLE, peer, 13, 1, MPI_DOUBLE, a);
		MPI_Win_complete(a);
		MPI_Win_wait(a);
	}
	MPI_Group_free(&other);
	MPI_Group_free(&world);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	double *base;
	MPI_Win_allocate(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, dup, &base, &b);
	MPI_Win_fence(0, b);
	MPI_Win_fence(0, b);
	MPI_Win_free(&b);
	MPI_Comm_free(&dup);
	MPI_Win_free(&a);
	MPI_Finalize();
	return 0;
}
