package main

import "testing"

// Rows measured on 2026-11-23 on an Intel Xeon VM: MPICH's 64-byte
// ping-pong, and Open MPI's, whose `off` measured 17 ns below the
// pass-through build.
func TestABControls(t *testing.T) {
	for _, c := range []struct {
		noLib, ptProfile, ptOff, off float64
		want                         string
	}{
		{-1.0, 1.5, 1.0, 1.5, "ok"},
		{-0.3, -1.0, -0.2, -17.4, "fail (off 17.2 below pass-through)"},
		{0.4, -1.4, -2.1, -1.4, "ok"},
		{0.4, 3.5, -2.1, -1.4, "fail (pass-through: profile - off 5.6)"},
		// Open MPI's allreduce on MPI_COMM_SELF on an AMD EPYC (Zen 1) VM,
		// 2026-11-25: interposition itself costs 9 ns, in both of the pass-through build's modes.
		{0.8, 9.0, 9.0, 10.0, "ok"},
		{-3.2, 0, 0, 9, "fail (no library: profile -3.2)"},
	} {
		if got := abControls(c.noLib, c.ptProfile, c.ptOff, c.off); got != c.want {
			t.Errorf("abControls(%v, %v, %v, %v) = %q, want %q", c.noLib, c.ptProfile, c.ptOff, c.off, got, c.want)
		}
	}
}

func TestParseVariants(t *testing.T) {
	vs, err := parseVariants("a=/x/a.so,b=b/{family}/{family}.so", "mpich")
	if err != nil || len(vs) != 2 || vs[0] != (variant{"a", "/x/a.so"}) || vs[1] != (variant{"b", "b/mpich/mpich.so"}) {
		t.Errorf("parseVariants = %v, %v", vs, err)
	}
	if vs, err := parseVariants("", "mpich"); vs != nil || err != nil {
		t.Errorf("parseVariants(\"\") = %v, %v", vs, err)
	}
	for _, bad := range []string{"a.so", "=a.so", "a=", "a=x.so,,"} {
		if _, err := parseVariants(bad, "mpich"); err == nil {
			t.Errorf("parseVariants(%q): no error", bad)
		}
	}
}
