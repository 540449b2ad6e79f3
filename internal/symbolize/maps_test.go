package symbolize

import (
	"debug/elf"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Mapping
	}{
		{
			name: "typical",
			in: `55d1e8a4b000-55d1e8a4c000 r--p 00000000 fe:01 1312214                    /usr/bin/cat
55d1e8a4c000-55d1e8a51000 r-xp 00001000 fe:01 1312214                    /usr/bin/cat
55d1e9d7e000-55d1e9d9f000 rw-p 00000000 00:00 0                          [heap]
7f3b2c000000-7f3b2c021000 rw-p 00000000 00:00 0 
7ffd3c3f5000-7ffd3c3f7000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
`,
			want: []Mapping{
				{0x55d1e8a4b000, 0x55d1e8a4c000, 0, "/usr/bin/cat"},
				{0x55d1e8a4c000, 0x55d1e8a51000, 0x1000, "/usr/bin/cat"},
				{0x55d1e9d7e000, 0x55d1e9d9f000, 0, "[heap]"},
				{0x7f3b2c000000, 0x7f3b2c021000, 0, ""},
				{0x7ffd3c3f5000, 0x7ffd3c3f7000, 0, "[vdso]"},
				{0xffffffffff600000, 0xffffffffff601000, 0, "[vsyscall]"},
			},
		},
		{
			name: "spaces deleted and no trailing newline",
			in: "00400000-00401000 r-xp 00000000 08:01 42 /opt/my app/bin/a.out\n" +
				"\n" +
				"7f0000000000-7f0000001000 r-xp 00002000 08:01 43 /tmp/libx.so (deleted)",
			want: []Mapping{
				{0x400000, 0x401000, 0, "/opt/my app/bin/a.out"},
				{0x7f0000000000, 0x7f0000001000, 0x2000, "/tmp/libx.so (deleted)"},
			},
		},
		{
			name: "crlf and tabs",
			in:   "1000-2000\tr-xp\t00003000\t00:1f\t7\t/lib/x.so\r\n",
			want: []Mapping{{0x1000, 0x2000, 0x3000, "/lib/x.so"}},
		},
		{name: "empty", in: "", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMaps(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, in := range []string{
		"garbage",
		"1000-2000 r-xp 00000000 00:00",         // no inode
		"10002000 r-xp 00000000 00:00 0 /x",     // no dash
		"zz-2000 r-xp 00000000 00:00 0 /x",      // bad start
		"1000-zz r-xp 00000000 00:00 0 /x",      // bad end
		"2000-1000 r-xp 00000000 00:00 0 /x",    // reversed
		"1000-2000 r-x 00000000 00:00 0 /x",     // bad perms
		"1000-2000 r-xp 0000000g 00:00 0 /x",    // bad offset
		"1000-2000 r-xp 00000000 0000 0 /x",     // bad dev
		"1000-2000 r-xp 00000000 00:00 abc /x",  // bad inode
		"1000-2000 r-xp 00000000 00:00 0 /x\n!", // second line
	} {
		if _, err := ParseMaps(strings.NewReader(in)); err == nil {
			t.Errorf("ParseMaps(%q) succeeded, want error", in)
		} else if !strings.Contains(err.Error(), "line") {
			t.Errorf("ParseMaps(%q) error %q does not name the line", in, err)
		}
	}
}

func TestReadSelfMaps(t *testing.T) {
	maps, err := ReadSelfMaps()
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	if len(maps) == 0 {
		t.Fatal("no mappings")
	}
	// The PC of this very function must resolve into the test binary.
	pc := funcPC(TestReadSelfMaps)
	mod, _, ok := Resolve(maps, pc)
	if !ok || !strings.HasPrefix(mod, "/") {
		t.Fatalf("Resolve(self pc %#x) = %q, %v", pc, mod, ok)
	}
}

// Synthetic program headers for the bias math. The layouts are those
// produced by GNU ld for x86-64 (-z separate-code), by older linkers
// (text at file offset 0, data not page aligned), and by a linker using a
// 2 MiB max page size where file offset and vaddr differ by 0x200000.
func funcPC(f any) uint64 { return uint64(reflect.ValueOf(f).Pointer()) }

var testLoads = map[string][]elf.ProgHeader{
	"/bin/nopie": {
		{Type: elf.PT_LOAD, Off: 0, Vaddr: 0x400000, Filesz: 0x5a8, Memsz: 0x5a8},
		{Type: elf.PT_LOAD, Flags: elf.PF_X, Off: 0x1000, Vaddr: 0x401000, Filesz: 0x1c5, Memsz: 0x1c5},
		{Type: elf.PT_LOAD, Off: 0x2000, Vaddr: 0x402000, Filesz: 0x100, Memsz: 0x100},
		{Type: elf.PT_LOAD, Off: 0x2e10, Vaddr: 0x403e10, Filesz: 0x220, Memsz: 0x228},
	},
	"/bin/pie": {
		{Type: elf.PT_LOAD, Off: 0, Vaddr: 0, Filesz: 0x628, Memsz: 0x628},
		{Type: elf.PT_LOAD, Flags: elf.PF_X, Off: 0x1000, Vaddr: 0x1000, Filesz: 0x1fd, Memsz: 0x1fd},
		{Type: elf.PT_LOAD, Off: 0x2000, Vaddr: 0x2000, Filesz: 0x114, Memsz: 0x114},
		{Type: elf.PT_LOAD, Off: 0x2db8, Vaddr: 0x3db8, Filesz: 0x260, Memsz: 0x268},
	},
	"/lib/libold.so": {
		{Type: elf.PT_LOAD, Flags: elf.PF_X, Off: 0, Vaddr: 0, Filesz: 0x7c4, Memsz: 0x7c4},
		{Type: elf.PT_LOAD, Off: 0xdf0, Vaddr: 0x200df0, Filesz: 0x230, Memsz: 0x238},
	},
	"/lib/libnew.so": {
		{Type: elf.PT_LOAD, Off: 0, Vaddr: 0, Filesz: 0x4e0, Memsz: 0x4e0},
		{Type: elf.PT_LOAD, Flags: elf.PF_X, Off: 0x1000, Vaddr: 0x1000, Filesz: 0x139, Memsz: 0x139},
		{Type: elf.PT_LOAD, Off: 0x2000, Vaddr: 0x2000, Filesz: 0xac, Memsz: 0xac},
		{Type: elf.PT_LOAD, Off: 0x2e08, Vaddr: 0x3e08, Filesz: 0x220, Memsz: 0x228},
	},
}

func testLoadsFunc(path string) ([]elf.ProgHeader, error) {
	if p, ok := testLoads[path]; ok {
		return p, nil
	}
	return nil, errors.New("no such file")
}

var testMaps = mustParseMaps(`00400000-00401000 r--p 00000000 08:01 1 /bin/nopie
00401000-00402000 r-xp 00001000 08:01 1 /bin/nopie
00402000-00403000 r--p 00002000 08:01 1 /bin/nopie
00403000-00405000 rw-p 00002000 08:01 1 /bin/nopie
55d1e8a4b000-55d1e8a4c000 r--p 00000000 08:01 2 /bin/pie
55d1e8a4c000-55d1e8a4d000 r-xp 00001000 08:01 2 /bin/pie
55d1e8a4d000-55d1e8a4e000 r--p 00002000 08:01 2 /bin/pie
55d1e8a4e000-55d1e8a50000 rw-p 00002000 08:01 2 /bin/pie
7f0000000000-7f0000001000 r-xp 00000000 08:01 3 /lib/libold.so
7f0000200000-7f0000201000 rw-p 00000000 08:01 3 /lib/libold.so
7f1000000000-7f1000001000 r--p 00000000 08:01 4 /lib/libnew.so
7f1000001000-7f1000002000 r-xp 00001000 08:01 4 /lib/libnew.so
7f1000002000-7f1000003000 r--p 00002000 08:01 4 /lib/libnew.so
7f1000003000-7f1000005000 rw-p 00002000 08:01 4 /lib/libnew.so
7f2000000000-7f2000001000 r-xp 00001000 08:01 5 /lib/gone.so (deleted)
7f3000000000-7f3000001000 r-xp 00000000 08:01 6 /lib/missing.so
7f4000000000-7f4000021000 rw-p 00000000 00:00 0
7ffd3c3f5000-7ffd3c3f7000 r-xp 00000000 00:00 0 [vdso]
`)

func mustParseMaps(s string) []Mapping {
	m, err := ParseMaps(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return m
}

func TestResolveBias(t *testing.T) {
	tests := []struct {
		name    string
		pc      uint64
		mod     string
		off     uint64
		wantErr bool
	}{
		{"non-PIE text: bias 0", 0x401136, "/bin/nopie", 0x401136, false},
		{"non-PIE data", 0x403e20, "/bin/nopie", 0x403e20, false},
		{"PIE text", 0x55d1e8a4c139, "/bin/pie", 0x1139, false},
		{"PIE rodata", 0x55d1e8a4d010, "/bin/pie", 0x2010, false},
		{"PIE data (vaddr != offset)", 0x55d1e8a4edc0, "/bin/pie", 0x3dc0, false},
		{"shared lib, text at offset 0", 0x7f0000000655, "/lib/libold.so", 0x655, false},
		{"shared lib, data 2MiB apart", 0x7f0000200e00, "/lib/libold.so", 0x200e00, false},
		{"shared lib, separate code", 0x7f1000001109, "/lib/libnew.so", 0x1109, false},
		{"shared lib, first byte of text", 0x7f1000001000, "/lib/libnew.so", 0x1000, false},
		{"deleted file", 0x7f2000000010, "", 0, true},
		{"unreadable file", 0x7f3000000010, "", 0, true},
		{"anonymous", 0x7f4000000010, "", 0, true},
		{"vdso", 0x7ffd3c3f5100, "", 0, true},
		{"unmapped", 0x10, "", 0, true},
		{"just past a mapping", 0x7f1000005000, "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mod, off, ok := resolveWith(testMaps, tc.pc, testLoadsFunc)
			if ok == tc.wantErr || mod != tc.mod || off != tc.off {
				t.Errorf("resolve(%#x) = %q, %#x, %v; want %q, %#x, %v",
					tc.pc, mod, off, ok, tc.mod, tc.off, !tc.wantErr)
			}
		})
	}
}

func TestResolveUnsortedMaps(t *testing.T) {
	maps := []Mapping{
		{0x7f1000001000, 0x7f1000002000, 0x1000, "/lib/libnew.so"},
		{0x401000, 0x402000, 0x1000, "/bin/nopie"},
	}
	mod, off, ok := resolveWith(maps, 0x401010, testLoadsFunc)
	if !ok || mod != "/bin/nopie" || off != 0x401010 {
		t.Errorf("got %q %#x %v", mod, off, ok)
	}
}

func TestResolveRealFileCaches(t *testing.T) {
	maps, err := ReadSelfMaps()
	if err != nil {
		t.Skip(err)
	}
	pc := funcPC(TestResolveRealFileCaches)
	mod, off1, ok := Resolve(maps, pc)
	if !ok {
		t.Fatal("not resolved")
	}
	if _, ok := loadsCache.Load(mod); !ok {
		t.Errorf("program headers of %s not cached", mod)
	}
	_, off2, _ := Resolve(maps, pc)
	if off1 != off2 {
		t.Errorf("unstable: %#x vs %#x", off1, off2)
	}
}
