package main

import (
	"github.com/tandem-ml/tandem/tests"
	"slices"
	"time"
)

// Median of the durations (the mean of the middle two for an even count); 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Min of the durations; 0 for none.
func Min(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Min(ds)
}

// NMSE is the harness's comparison (tests.NMSE): Σ(x−ref)²/Σref² over the finite values, +Inf
// when x and ref differ in length or in where they are NaN or infinite.
func NMSE(x, ref []float32) float64 { return tests.NMSE(x, ref) }

// Throughput is work per second in units of 10⁹ (GFLOPS or GB/s).
func Throughput(work float64, d time.Duration) float64 {
	if d <= 0 || work <= 0 {
		return 0
	}
	return work / d.Seconds() / 1e9
}

// Timing decides how many timed runs to make.
type Timing struct {
	MinReps, MaxReps int
	Budget           time.Duration
}

// More reports whether another timed run is wanted after reps runs that took spent in total.
func (t Timing) More(reps int, spent time.Duration) bool {
	if reps < t.MinReps {
		return true
	}
	return reps < t.MaxReps && spent < t.Budget
}

// Estimator predicts a case's run time on one target from what it has already measured, so that
// sizes too slow for the device are skipped before they run.
type Estimator struct {
	// last point of each family on this target
	fam map[string]point
	// best known throughput (work per second) per metric on this target, from any family
	rate map[Metric]float64
}

type point struct {
	work float64
	dur  time.Duration
}

// Observe records that a case of family fam with work w took d per run.
func (e *Estimator) Observe(fam string, m Metric, w float64, d time.Duration) {
	if e.fam == nil {
		e.fam, e.rate = map[string]point{}, map[Metric]float64{}
	}
	if w <= 0 || d <= 0 {
		return
	}
	e.fam[fam] = point{w, d}
	if r := w / d.Seconds(); r > e.rate[m] {
		e.rate[m] = r
	}
}

// Same predicts the time of a run of work w of family fam, scaled linearly from the family's last
// (smaller) size measured on this target; ok is false when there is none.
func (e *Estimator) Same(fam string, w float64) (d time.Duration, ok bool) {
	if p, found := e.fam[fam]; found && p.work > 0 {
		return time.Duration(float64(p.dur) * w / p.work), true
	}
	return 0, false
}

// Like predicts it from a related family's throughput on this target (like, when measured), else
// from the best throughput seen for the metric; ok is false when nothing is known yet. It is a
// rough guess: the runner only skips on it when the guess is far over the limit.
func (e *Estimator) Like(like string, m Metric, w float64) (d time.Duration, ok bool) {
	if p, found := e.fam[like]; found && p.work > 0 && p.dur > 0 {
		return time.Duration(w / (p.work / p.dur.Seconds()) * float64(time.Second)), true
	}
	if r := e.rate[m]; r > 0 {
		return time.Duration(w / r * float64(time.Second)), true
	}
	return 0, false
}

// GuessFactor is how far over -maxrun a guess from another family (Estimator.Like) must be before
// the size is skipped: such guesses only stop the hopeless cases.
const GuessFactor = 10

// SkipReason decides whether a case is skipped before it runs: same is the estimate from the
// family's smaller sizes (sameOK when there is one), guess the one from related work.
func SkipReason(same time.Duration, sameOK bool, guess time.Duration, guessOK bool, maxRun time.Duration) string {
	switch {
	case sameOK && same > maxRun:
		return "too slow on this device: ~" + fmtDuration(same) + " per run"
	case !sameOK && guessOK && guess > GuessFactor*maxRun:
		return "too slow on this device: ~" + fmtDuration(guess) + " per run (guessed)"
	}
	return ""
}

func sortStrings(s []string) { slices.Sort(s) }
