package platform

// What the external tests (fuzz_test.go, which needs the registry and so cannot be in this
// package) check of the grapheme segmentation.
var (
	CountGraphemes = countGraphemes
	GraphemeStarts = graphemeStarts
)
