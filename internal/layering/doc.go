// Package layering holds no code. Its test enforces the import rules
// between mpiscope's packages (README, Layout): profile and internal/trace
// depend on the standard library only, so that any Go program can read
// mpiscope's files; the command's packages (internal/report, internal/cli)
// and the generator (internal/wrapgen) never depend on the runtime that is
// loaded into MPI programs (internal/interpose).
package layering
