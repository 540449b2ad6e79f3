package trace_test

import (
	"strconv"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// rawPosts counts the posts records in the raw (W) blocks of rank r's
// trace file and the posts they hold.
func rawPosts(t *testing.T, job string, r int) (records, entries int) {
	return rawRecords(t, job, r, trace.RawPostsRecords)
}

// TestTracePostsRecord: bw_8's windows (windows.c, 2 ranks, 50 windows of
// 64 MPI_Isend on rank 0 and 64 MPI_Irecv on rank 1 of 8 bytes, tag 9,
// each window's MPI_Waitall and acknowledgement) traced raw
// (MPISCOPE_TRACE_COMPRESS=off): the posts go into posts records (format
// version 5), all but a shape's first two (a full record, then a short
// one that fills the post memo; per window if another shape of the
// window shares the posts' dictionary slot) and any that took 2^16 ticks
// or more (a short record), a record per window at least; the decoder
// yields exactly
// 3,200 posts per rank, each with its peer, tag and bytes, in time order;
// every message is matched in OTF2 (3,200 of each of MpiIsend,
// MpiIsendComplete, MpiIrecvRequest, MpiIrecv; 50 MpiSend and MpiRecv)
// and in Perfetto (3,250 flows, both ends). Packed at MPI_Finalize, the
// same trace decodes to the same counts.
func TestTracePostsRecord(t *testing.T) {
	const w, k = 50, 64
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, pack := range []string{"off", "finalize"} {
			t.Run(pack, func(t *testing.T) {
				job, _ := run(t, f, "windows.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": pack},
					strconv.Itoa(w))
				j, err := trace.OpenJob(job)
				if err != nil {
					t.Fatal(err)
				}
				if len(j.Ranks) != 2 {
					t.Fatalf("%d rank traces, want 2", len(j.Ranks))
				}
				for _, r := range j.Ranks {
					rank := r.Header.Rank
					var posts, slow, late int
					var prev uint64
					err := r.Scan(func(tid int, evs []trace.Event) error {
						for i := range evs {
							e := &evs[i]
							fn := r.FnName(int(e.Fn))
							if e.Kind != trace.KCall || fn != "MPI_Isend" && fn != "MPI_Irecv" {
								continue
							}
							ok := rank == 0 && fn == "MPI_Isend" && e.Flags == trace.FSend|trace.FReq && e.SPeer == 1 &&
								e.STag == 9 && e.SBytes == 8 && e.RPeer == -1 && e.RTag == -1 && e.RBytes == 0 ||
								rank == 1 && fn == "MPI_Irecv" && e.Flags == trace.FRecv|trace.FReq && e.RPeer == 0 &&
									e.RTag == 9 && e.RBytes == 8 && e.SPeer == -1 && e.STag == -1 && e.SBytes == 0
							if !ok {
								t.Errorf("rank %d: post %d: %+v", rank, posts, *e)
							}
							if e.T1 < e.T0 || e.T0 < prev {
								late++
							}
							if posts >= 2 && e.T1-e.T0 >= 1<<16 {
								slow++
							}
							prev = e.T1
							posts++
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if posts != w*k || late != 0 {
						t.Errorf("rank %d: %d posts (%d out of time order), want %d", rank, posts, late, w*k)
					}
					if pack != "off" {
						continue
					}
					if n, e := rawPosts(t, job, rank); n < w || e > w*k-2 || e < w*(k-2)-slow {
						t.Errorf("rank %d: %d posts records of %d posts, want at least %d of %d to %d (%d posts of 2^16 ticks or more)",
							rank, n, e, w, w*(k-2)-slow, w*k-2, slow)
					} else {
						t.Logf("rank %d: %d posts records of %d posts (%d of 2^16 ticks or more)", rank, n, e, slow)
					}
				}
				nf := w*k + w
				wantCounts(t, "Perfetto", perfettoArgs(t, job), map[string]int{"flow start": nf, "flow finish": nf})
				text, lines, ow := toOTF2(t, job)
				if ow.Unmatched != 0 {
					t.Errorf("%d unmatched completions", ow.Unmatched)
				}
				wantLines(t, lines, map[string]int{"MPI_ISEND": w * k, "MPI_ISEND_COMPLETE": w * k, "MPI_IRECV_REQUEST": w * k,
					"MPI_IRECV": w * k, "MPI_SEND": w, "MPI_RECV": w})
				if t.Failed() && len(text) < 1<<16 {
					t.Logf("%s", text)
				}
			})
		}
	})
}
