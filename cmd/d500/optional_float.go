package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
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

func (f *optionalFloat) Set(s string) error {
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
