package wrapgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// The trace record kinds, flags and completion kinds are written three
// times: internal/interpose/trace.h (MS_TK_*, MS_TF_*, MS_TC_*: what the C
// recorder stores), internal/trace/format.go (K*, F*: what the reader
// decodes) and this package (tf*: the flags the generated wrappers pass as
// constants; Cpl*: the completion kinds). traceConsts pairs them.
type traceConst struct {
	c      string // the #define in trace.h
	goName string // the Go constant
	value  int    // the Go constant's value
}

var traceConsts = []traceConst{
	{"MS_TK_CALL", "trace.KCall", trace.KCall},
	{"MS_TK_COMPLETE", "trace.KComplete", trace.KComplete},
	{"MS_TK_ENTER", "trace.KEnter", trace.KEnter},
	{"MS_TK_LEAVE", "trace.KLeave", trace.KLeave},
	{"MS_TK_MARK", "trace.KMark", trace.KMark},
	{"MS_TK_POST", "trace.KPost", trace.KPost},
	{"MS_TK_RMA", "trace.KRma", trace.KRma},
	{"MS_TK_IO", "trace.KIo", trace.KIo},
	{"MS_TK_CPLS", "trace.RawCpls", trace.RawCpls},
	{"MS_TK_POSTS", "trace.RawPosts", trace.RawPosts},
	{"MS_TF_SEND", "trace.FSend", trace.FSend},
	{"MS_TF_RECV", "trace.FRecv", trace.FRecv},
	{"MS_TF_REQ", "trace.FReq", trace.FReq},
	{"MS_TF_COLL", "trace.FColl", trace.FColl},
	{"MS_TF_LOCAL", "trace.FLocal", trace.FLocal},
	{"MS_TF_SEND", "wrapgen.tfSend", tfSend},
	{"MS_TF_RECV", "wrapgen.tfRecv", tfRecv},
	{"MS_TF_REQ", "wrapgen.tfReq", tfReq},
	{"MS_TF_COLL", "wrapgen.tfColl", tfColl},
	{"MS_TC_ONE", "wrapgen.CplOne", CplOne},
	{"MS_TC_ALL", "wrapgen.CplAll", CplAll},
	{"MS_TC_ANY", "wrapgen.CplAny", CplAny},
	{"MS_TC_SOME", "wrapgen.CplSome", CplSome},
}

var traceDefine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(MS_T[KFC]_[A-Z0-9_]+)[ \t]+(.*?)[ \t]*(?:/\*.*)?$`)

// cDefines returns trace.h's MS_TK_, MS_TF_ and MS_TC_ macros whose value
// is an integer; the others (MS_TF_ALLMSG, an or of flags) are listed in
// derived.
func cDefines(src string) (vals map[string]int, derived []string, err error) {
	vals = map[string]int{}
	for _, m := range traceDefine.FindAllStringSubmatch(src, -1) {
		v, perr := strconv.ParseInt(m[2], 0, 64)
		if perr != nil {
			derived = append(derived, m[1])
			continue
		}
		if _, dup := vals[m[1]]; dup {
			return nil, nil, fmt.Errorf("%s defined twice", m[1])
		}
		vals[m[1]] = int(v)
	}
	return vals, derived, nil
}

// checkTraceConsts compares trace.h's macros with the Go constants: every
// pair equal, and every macro paired.
func checkTraceConsts(src string, consts []traceConst) []string {
	vals, _, err := cDefines(src)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	used := map[string]bool{}
	for _, k := range consts {
		used[k.c] = true
		v, ok := vals[k.c]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s (= %s, %d) is not defined in trace.h", k.c, k.goName, k.value))
		case v != k.value:
			bad = append(bad, fmt.Sprintf("trace.h: %s is %d, %s is %d", k.c, v, k.goName, k.value))
		}
	}
	var names []string
	for n := range vals {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !used[n] {
			bad = append(bad, fmt.Sprintf("trace.h defines %s = %d, which no Go constant matches (add it to package trace or wrapgen and to traceConsts)", n, vals[n]))
		}
	}
	return bad
}

func TestTraceConstsMatchTraceH(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "interpose", "trace.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range checkTraceConsts(string(src), traceConsts) {
		t.Error(msg)
	}
	if _, derived, _ := cDefines(string(src)); !slices.Equal(derived, []string{"MS_TF_ALLMSG"}) {
		t.Errorf("trace.h's macros that are not plain integers: %v, want [MS_TF_ALLMSG] (a new one: check it against the Go side)", derived)
	}
}

// goConsts returns the names of the package-level constants of the
// package in dir (tests excluded) that match re.
func goConsts(t *testing.T, dir string, re *regexp.Regexp) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				for _, id := range s.(*ast.ValueSpec).Names {
					if re.MatchString(id.Name) {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// A kind or flag added on the Go side must be added to trace.h (and to
// traceConsts) too.
func TestTraceConstsComplete(t *testing.T) {
	listed := map[string]bool{}
	for _, k := range traceConsts {
		listed[k.goName] = true
	}
	for _, side := range []struct {
		dir, pkg string
		re       *regexp.Regexp
	}{
		{filepath.Join("..", "trace"), "trace", regexp.MustCompile(`^[KF][A-Z][A-Za-z0-9]*$`)},
		{".", "wrapgen", regexp.MustCompile(`^(tf[A-Z]|Cpl[A-Z])`)},
	} {
		names := goConsts(t, side.dir, side.re)
		if len(names) == 0 {
			t.Errorf("package %s: no constant matches %v", side.pkg, side.re)
		}
		for _, n := range names {
			if !listed[side.pkg+"."+n] {
				t.Errorf("%s.%s is not paired with a macro of trace.h in traceConsts", side.pkg, n)
			}
		}
	}
}

// checkTraceConsts catches a drift either way.
func TestCheckTraceConstsFindsDrift(t *testing.T) {
	src := "#define MS_TK_CALL 1\n#define MS_TK_COMPLETE 3 /* drifted */\n#define MS_TF_NEW 32\n"
	consts := []traceConst{
		{"MS_TK_CALL", "trace.KCall", 1},
		{"MS_TK_COMPLETE", "trace.KComplete", 2},
		{"MS_TK_ENTER", "trace.KEnter", 3},
	}
	want := []string{
		"trace.h: MS_TK_COMPLETE is 3, trace.KComplete is 2",
		"MS_TK_ENTER (= trace.KEnter, 3) is not defined in trace.h",
		"trace.h defines MS_TF_NEW = 32, which no Go constant matches (add it to package trace or wrapgen and to traceConsts)",
	}
	if got := checkTraceConsts(src, consts); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
