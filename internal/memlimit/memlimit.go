package memlimit

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Machine returns the machine's memory in bytes (MemTotal of
// /proc/meminfo), or 0 where it cannot be read (then nothing is refused).
func Machine() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// Check returns an error naming what and its size when need bytes are more
// than limit (0 or less: no limit).
func Check(what string, need, limit int64) error {
	if limit <= 0 || need <= limit {
		return nil
	}
	return fmt.Errorf("%s needs %s, more than the memory limit of %s (--memory-limit to change it)", what, Format(need), Format(limit))
}

// units are the binary size suffixes Parse and Format know, largest first.
var units = []struct {
	name string
	size int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// Format writes n bytes in the largest binary unit it reaches, with one
// decimal where it has one: 4 GiB, 1.5 MiB, 512 B.
func Format(n int64) string {
	for _, u := range units {
		if n >= u.size {
			v := strings.TrimSuffix(strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64), ".0")
			return v + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// Parse reads a size: a number of bytes, or a number with one of the
// suffixes KiB, MiB, GiB, TiB (K, M, G, T, KB, MB, GB and TB are taken as
// the same binary units), in any case. "0" means no limit.
func Parse(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	upper := strings.ToUpper(num)
	found := false
	for _, u := range units {
		letter := u.name[:1]
		for _, suffix := range []string{strings.ToUpper(u.name), letter + "B", letter} {
			if !found && strings.HasSuffix(upper, suffix) {
				num, mult, found = strings.TrimSpace(num[:len(num)-len(suffix)]), u.size, true
			}
		}
	}
	if !found && strings.HasSuffix(upper, "B") {
		num = num[:len(num)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v >= 0) || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with KiB, MiB, GiB or TiB)", s)
	}
	return int64(v * float64(mult)), nil
}
