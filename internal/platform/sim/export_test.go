package sim

// The helpers of package sim's tests that the tests of package sim_test use too.
var (
	States      = states
	Alternating = alternating
)
