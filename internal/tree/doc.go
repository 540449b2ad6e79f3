// Package tree holds no code: its tests check the source tree as a whole.
//
// layering_test.go enforces the import rules between mpiscope's packages
// (README, Layout): profile and internal/trace depend on the standard
// library only, so that any Go program can read mpiscope's files; the
// command's packages (internal/report, internal/cli) and the generator
// (internal/wrapgen) never depend on the runtime that is loaded into MPI
// programs (internal/interpose).
//
// makefile_test.go checks that make with no target builds (the default
// goal is all, whatever mk/*.mk declares).
//
// words_test.go checks that the tree speaks of itself: no file cites a
// numbered round of work on the project; dates and commits say when.
package tree
