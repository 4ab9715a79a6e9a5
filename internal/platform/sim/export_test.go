package sim

// What the fuzz tests (package sim_test, with simtest's harness) name of the tests' own.
var YTMeta1 = ytMeta1

type RedditTestLease = redditTestLease
