package cli

import (
	"fmt"
	flag "github.com/spf13/pflag"
	"math"
	"strconv"

	"github.com/deep500/deep500-go/internal/memlimit"
)

// optionalFloat is a float flag that may be left unset, as the
// optimizer's hyperparameters are: unset, the optimizer's default holds.
// It shows no default of its own in the help, and refuses what is not a
// finite number (a NaN rate would train nothing, silently).
type optionalFloat struct {
	v   float64
	set bool
}

func (f *optionalFloat) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

// Type names the value in the help.
func (f *optionalFloat) Type() string { return "F" }

// Set reads a number; "" (the flag's default value) unsets it.
func (f *optionalFloat) Set(s string) error {
	if s == "" {
		*f = optionalFloat{}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s is not a finite number", s)
	}
	f.v, f.set = v, true
	return nil
}

// optionalFloatFlag registers an optionalFloat on fs.
func optionalFloatFlag(fs *flag.FlagSet, name, usage string) *optionalFloat {
	f := new(optionalFloat)
	fs.Var(f, name, usage)
	return f
}

// memoryLimit is the --memory-limit flag: the most memory the tensors a
// command makes from declared shapes (random inputs, a synthetic dataset)
// may take, checked before they are made (package memlimit). Its default
// is the machine's memory; 0 is no limit.
type memoryLimit struct{ bytes int64 }

func (m *memoryLimit) String() string {
	if m == nil || m.bytes == 0 {
		return "0"
	}
	return memlimit.Format(m.bytes)
}

// Type names the value in the help.
func (m *memoryLimit) Type() string { return "SIZE" }

func (m *memoryLimit) Set(s string) error {
	v, err := memlimit.Parse(s)
	if err != nil {
		return err
	}
	m.bytes = v
	return nil
}

// memoryLimitFlag registers --memory-limit on fs, set to the machine's
// memory.
func memoryLimitFlag(fs *flag.FlagSet) *memoryLimit {
	m := &memoryLimit{bytes: memlimit.Machine()}
	fs.Var(m, "memory-limit", "the most memory the tensors made from declared shapes may take, as a `SIZE` (bytes, or 512MiB, 8GiB, ...; 0: no limit); default the machine's memory")
	return m
}
