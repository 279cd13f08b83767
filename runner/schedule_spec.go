package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// ScheduleSpecs documents the learning-rate schedule specs ParseSchedule
// accepts, for usage messages.
const ScheduleSpecs = "step:EVERY:GAMMA (× GAMMA every EVERY steps), epoch:EVERY:GAMMA (× GAMMA every EVERY epochs), cosine[:MIN] (anneal to MIN over the run)"

// ParseSchedule reads a learning-rate schedule from the command line:
// "step:EVERY:GAMMA", "epoch:EVERY:GAMMA" or "cosine[:MIN]". An empty spec
// (or "constant") is no schedule: nil.
func ParseSchedule(spec string) (Schedule, error) {
	if spec == "" || spec == "constant" {
		return nil, nil
	}
	kind, rest, _ := strings.Cut(spec, ":")
	var args []string
	if rest != "" {
		args = strings.Split(rest, ":")
	}
	bad := func(why string) error {
		return fmt.Errorf("learning-rate schedule %q: %s (want %s)", spec, why, ScheduleSpecs)
	}
	num := func(s, what string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return 0, bad(fmt.Sprintf("%s %q is not a non-negative number", what, s))
		}
		return v, nil
	}
	switch kind {
	case "step", "epoch":
		if len(args) != 2 {
			return nil, bad("give EVERY and GAMMA")
		}
		every, err := strconv.Atoi(args[0])
		if err != nil || every <= 0 {
			return nil, bad(fmt.Sprintf("EVERY %q is not a positive integer", args[0]))
		}
		gamma, err := num(args[1], "GAMMA")
		if err != nil {
			return nil, err
		}
		if kind == "step" {
			return StepDecay{Every: every, Gamma: gamma}, nil
		}
		return EpochDecay{Every: every, Gamma: gamma}, nil
	case "cosine":
		if len(args) > 1 {
			return nil, bad("give at most MIN")
		}
		var lo float64
		if len(args) == 1 {
			v, err := num(args[0], "MIN")
			if err != nil {
				return nil, err
			}
			lo = v
		}
		return Cosine{Min: lo}, nil
	}
	return nil, bad("unknown kind " + strconv.Quote(kind))
}
