/* api.h: what Go calls in the C runtime (declarations only, for cgo). */
#ifndef MS_API_H
#define MS_API_H
#include "ms.h"

extern uint64_t ms_app_start, ms_app_end, ms_cal_tsc0, ms_cal_ns0;
extern int64_t ms_real0;
extern int ms_thread_level, ms_quiet;

ms_thread *ms_threads_head(void);
uint64_t ms_pending_key(const ms_thread *t);
uint32_t ms_epoch_now(void);
int ms_comm_count(void);
ms_comm_meta_t *ms_comm_meta_at(int i);
uint64_t ms_ticks_now(void);
uint64_t ms_mono_ns(void);
void ms_clock_pair(uint64_t *ticks, uint64_t *ns);
int ms_region_count(void);
const char *ms_region_path(int i);
int ms_region_parent(int i);
size_t ms_type_size_offset(void); /* hot.c: 0 = datatype sizes from the per-thread cache */
int ms_event_count(void);
const char *ms_event_text(int i);
int ms_priv_bcast(void *buf, int len, int root);
int ms_priv_send(const void *buf, int64_t len, int dest);
void *ms_priv_recv(int src, int64_t *len);
int ms_priv_barrier(void);
void ms_mpi_version(char *lib, int liblen, int *major, int *minor);
int ms_world_rank_get(void);
int ms_world_size_get(void);
int ms_use_tsc_get(void);
const char *ms_fn_name(int i);
const char *ms_fn_class(int i);
int ms_nfuncs_get(void);
int ms_busy_read(const ms_thread *t, ms_busy_t *b); /* hot.c: the call in progress on t */
uint64_t ms_off_total(uint64_t end);                 /* hot.c: ticks with recording off up to end */
#endif
