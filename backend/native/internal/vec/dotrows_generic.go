//go:build !amd64 || purego

package vec

// mulAddTransB is the portable loop: there is no assembly for this
// architecture (or the purego tag is set).
var mulAddTransB = mulAddTransBPortable

// mulAddTransBImpl is one implementation of MulAddTransB, named for tests
// and benchmarks.
type mulAddTransBImpl struct {
	name string
	run  func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int)
}

// mulAddTransBImpls lists the implementations this machine runs: the
// portable one.
func mulAddTransBImpls() []mulAddTransBImpl {
	return []mulAddTransBImpl{{"portable", mulAddTransBPortable}}
}

// mulAdd is the portable loop.
var mulAdd = mulAddPortable

// mulAddImpls lists the MulAdd implementations this machine runs: the
// portable one.
func mulAddImpls() []mulAddTransBImpl {
	return []mulAddTransBImpl{{"portable", mulAddPortable}}
}
