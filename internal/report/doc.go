// Package report renders a *profile.Profile as a text report for people, or
// as JSON or CSV for scripts.
//
// # Text
//
// Plain ASCII with aligned columns. Sections, each introduced by a rule
// "@--- Title ---", in this order: header (command, ranks, hosts, MPI
// library, times, settings, status, notes), MPI time per rank, functions,
// top callsites, message sizes, communicators, point-to-point, regions and
// user events; "In progress" (calls not returned when the data was written,
// longest first) comes after the header when the profile has some. The first three are always present; the others only when the
// profile has data for them. Each section heading names its time unit (s, ms
// or us, chosen per table from its largest value; per-call columns have
// their own unit). Bytes are exact integers. Unless Options.All, a table
// shows Options.Top rows (default 20) and ends with "(N more; use --all)";
// the rank table shows the Top ranks with the highest and the Top with the
// lowest MPI% when there are more than 2*Top ranks. The callsites of one MPI
// function in one region that resolve to the same function, file and line
// (the addresses of a loop unrolled by the compiler) are one row; JSON and
// CSV keep each address in sites. Function names are demangled (C++, and
// gfortran's module procedures and main program). Ties are broken by
// name or key, and the output never depends on the current time.
//
// Percentages: %App is of the total app time over ranks (sum of Rank.AppNs),
// %MPI of the total MPI time over ranks (sum of Rank.MPINs, or of Func.TimeNs
// when there is no rank data). COV is the coefficient of variation (population
// standard deviation / mean) of a per-rank quantity over the ranks that have
// it.
//
// # JSON
//
// One object, schema "mpiscope.report/1" (see Schema). Keys are snake_case,
// arrays are never null, times are integer nanoseconds (suffix _ns), and
// arrays keep the profile's order (sorted by key, see package profile), so
// output is stable. Derived floats are rounded to 6 decimals. Nothing is
// truncated; Options.All and Options.Top are ignored.
//
//	schema    string
//	source    string            Options.Source
//	notes     [string]          Options.Notes
//	meta      {command [string], num_ranks, hosts [string], mpi_library,
//	           mpi_version, family, tool, timer, start_ns, stop_ns,
//	           start, stop (RFC3339 UTC, "" if unknown), duration_ns,
//	           settings [{name, value}], snapshot, partial}
//	totals    {ranks (present), app_ns, mpi_ns, calls, dropped,
//	           mpi_pct (of the sums), mpi_pct_mean (mean of per-rank mpi_pct)}
//	ranks     [{rank, host, pid, app_ns, mpi_ns, calls, threads, state,
//	           dropped, mpi_pct}]
//	funcs     [{name, class, calls, time_ns, min_call_ns, max_call_ns, bytes,
//	           rank_time SPREAD, pct_app, pct_mpi, mean_ns (per call), cov}]
//	sites     [{id (1-based position), callsite (id of its row in
//	           callsites), func, loc {module, offset, function, file, line},
//	           location (text form), region, calls, time_ns, min_ns, max_ns,
//	           bytes, rank_time SPREAD, pct_mpi, mean_ns, cov}]
//	callsites [{id (1-based, the ID of the text report), func, function,
//	           file, line, location, region, calls, time_ns, min_ns, max_ns,
//	           bytes, pct_mpi, mean_ns, sites [site id]}]
//	hists     [{func, bins [{log2, lo, hi (byte range), calls, bytes, time_ns}]}]
//	comms     [{key, name, size, creator, members, calls, time_ns, bytes, pct_mpi}]
//	peers     [{rank, peer, sent_msgs, sent_bytes, recv_msgs, recv_bytes}]
//	regions   [{path, visits, wall_ns, mpi_ns, ranks, rank_mpi SPREAD,
//	           mpi_pct (of wall_ns), cov, funcs [{func, calls, time_ns, bytes,
//	           pct_region_mpi}] (from the sites in the region, by time)}]
//	events    [{text, count, ranks}]
//	in_progress [{rank, thread, func, loc {...}, location, region, comm,
//	           peer (world rank; null none, -2 MPI_ANY_SOURCE), tag (null
//	           none, -1 MPI_ANY_TAG), elapsed_ns}] calls not returned when
//	           the data was written (profile.Busy); absent when none
//	recording_off {total_ns, min_ns, min_rank, max_ns, max_rank,
//	           ranks [{rank, off_ns}]} time with recording off
//	           (MPI_Pcontrol(0)); absent when none. app_ns, mpi_pct and
//	           pct_app leave that time out (so does the text report,
//	           whose header then has a "Recording off" line)
//
//	SPREAD    {n, sum, sum_sq, min, max, min_rank, max_rank, mean, cov}
//
// # CSV
//
// The same data as JSON as tidy tables (one observation per row, one
// variable per column, a header row), each a CSV file of its own that
// pandas.read_csv or a spreadsheet loads: WriteCSVDir writes them into a
// directory as meta.csv (one row), settings, notes, totals (one row), ranks,
// funcs, callsites, sites, message_sizes, comms, peers, regions,
// region_funcs, events, in_progress and recording_off.csv, every table
// present (possibly with only its header). in_progress has JSON's
// in_progress with loc flattened (module, offset, function, file, line),
// peer and tag empty where JSON has null; recording_off has JSON's
// recording_off.ranks (rank, off_ns: the ranks with time off). Spread columns are flattened with a prefix (rank_time_min_ns,
// rank_time_min_rank, ...); callsites.sites lists site ids separated by
// spaces. Write in format CSV gives the same cells as one long table,
// header "table,row,column,value", one record per cell, rows numbered from
// 1 within each table. Fields are quoted per RFC 4180, and also when they
// start with '#' or a space or end in a space.
//
// # Diff
//
// WriteDiff compares two profiles, A and B (diff.go). Text: a header (the
// sources; command, ranks, MPI library and family, both when they differ,
// with a NOTE line for each of rank count, command line and MPI library
// that differs), a summary (app time, MPI time, calls, bytes, MPI%), then
// functions, callsites, communicators and message-size bins, each row with
// time, calls and bytes of A and B, the change and the time's change in
// percent of A ("new" when A is 0). Rows are matched by function name; by
// MPI function, region, calling function, base name of the source file and
// line (module and offset for callsites without a line), so that addresses
// that moved between builds still match; by communicator key; by function
// and log2 size bin. Only rows that changed are listed, by absolute change
// in time, then calls, then bytes, then key; a table with none says "(no
// change)". DiffOptions.PerRank divides each run's values by its number of
// ranks (the ranks in the profile). JSON, schema "mpiscope.diff/1":
//
//	schema, per_rank
//	a, b      {source, notes [string], command [string], num_ranks,
//	           mpi_library, family, divisor}
//	differ    [string]  "rank count", "command line", "MPI library"
//	summary   {app_ns, mpi_ns, calls, bytes, mpi_pct: VAL}
//	funcs     [{func, time_ns, calls, bytes: VAL}]
//	callsites [{func, function, file, line (or module, offset), region, VALs}]
//	comms     [{comm, VALs}]
//	sizes     [{func, log2, lo, hi, VALs}]
//
//	VAL       {a, b, change, change_pct (null when a is 0 and b is not)}
package report
