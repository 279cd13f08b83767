package metrics

import (
	"errors"
	"testing"
)

func TestBenchCountsRunsAndStopsOnError(t *testing.T) {
	calls := 0
	res, err := Bench(func() error { calls++; return nil }, 2, 5)
	if err != nil || calls != 7 || res.Iterations != 5 || res.ThroughputPerS <= 0 {
		t.Fatalf("Bench: %+v, %v, %d calls", res, err, calls)
	}
	boom := errors.New("boom")
	calls = 0
	_, err = Bench(func() error {
		calls++
		if calls == 4 {
			return boom
		}
		return nil
	}, 1, 5)
	if !errors.Is(err, boom) || calls != 4 {
		t.Fatalf("error not returned at the failing run: %v after %d calls", err, calls)
	}
	if _, err := Bench(func() error { return nil }, 0, 0); err == nil {
		t.Fatal("zero iterations accepted")
	}
}
