package memlimit

import (
	"strings"
	"testing"
)

func TestParseAndFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"512", 512}, {"512B", 512}, {"1KiB", 1024}, {"1.5MiB", 3 << 19}, {"8GiB", 8 << 30},
		{"8G", 8 << 30}, {"8gb", 8 << 30}, {" 2 TiB ", 2 << 40}, {"1e3", 1000},
	} {
		if got, err := Parse(tc.in); err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "GiB", "1QiB", "NaN", "1e30"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "not a size") {
			t.Errorf("Parse(%q): error %v", bad, err)
		}
	}
	for n, want := range map[int64]string{512: "512 B", 1024: "1 KiB", 3 << 19: "1.5 MiB", 4 << 40: "4 TiB", 1<<30 + 1: "1 GiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := Check("x", 10, 10); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if err := Check("x", 1<<50, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	err := Check(`input "x"`, 4<<40, 24<<30)
	if err == nil || !strings.Contains(err.Error(), `input "x" needs 4 TiB, more than the memory limit of 24 GiB`) {
		t.Errorf("over the limit: %v", err)
	}
	if m := Machine(); m < 0 {
		t.Errorf("Machine() = %d", m)
	}
}
