package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
)

// The server's messages name its API operations; the command line names its own commands
// instead.
func TestInCLITerms(t *testing.T) {
	t.Parallel()
	cases := []struct{ api, cli string }{
		{"project p1 has no Bluesky channel; connect one with POST /channels or leave bluesky out",
			"project p1 has no Bluesky channel; connect one with `reelay channels connect` or leave bluesky out"},
		{"no channel c1 in project 6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11 (GET /channels?projectId=6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11 lists them)",
			"no channel c1 in project 6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11 (`reelay channels list --project 6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11` lists them)"},
		{"is required to publish to Pinterest (GET /channels/{id}/options lists the boards)",
			"is required to publish to Pinterest (`reelay channels options <channel id>` lists the boards)"},
		{"only a scheduled post that has not fired can be canceled; read its status with GET /posts/{id}",
			"only a scheduled post that has not fired can be canceled; read its status with `reelay posts get <post id>`"},
		{"is required: the account has 2 projects (GET /projects lists them)",
			"is required: the account has 2 projects (`reelay projects list` lists them)"},
		{"this server has no YouTube app: set REELAY_YOUTUBE_CLIENT_ID and REELAY_YOUTUBE_CLIENT_SECRET, connect with a token pair through POST /channels, or add sandbox=true",
			"this server has no YouTube app: set REELAY_YOUTUBE_CLIENT_ID and REELAY_YOUTUBE_CLIENT_SECRET, connect with a token pair through `reelay channels connect`, or add --sandbox-consent (or --sandbox)"},
		{"POST /channelsx and GET /projectsy are not operations", "POST /channelsx and GET /projectsy are not operations"},
	}
	for _, c := range cases {
		if got := inCLITerms(c.api); got != c.cli {
			t.Errorf("%q\n got %q\nwant %q", c.api, got, c.cli)
		}
	}
}

// End to end: what the server refuses is told in the command line's terms.
func TestCLIErrorsNameCommands(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, store.SQLite)
	video := mediatest.MP4(t, mediatest.Options{})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"publish", "--video", video, "--platforms", "bluesky", "--title", "t"}, "connect one with `reelay channels connect` or leave bluesky out"},
		{[]string{"channels", "connect", "youtube"}, "through `reelay channels connect`, or add --sandbox-consent (or --sandbox)"},
	} {
		r := srv.cli(t, c.args...)
		r.failed(t, exitError, c.want)
		if strings.Contains(r.stderr, "POST /") || strings.Contains(r.stderr, "GET /") {
			t.Errorf("%v: stderr names an API path:\n%s", c.args, r.stderr)
		}
	}
}

// Every API operation a server message names has a command to be told instead: the string
// literals of the packages whose errors reach a client are read, and none may still name an
// operation once in the command line's terms.
func TestEveryAPIReferenceHasACommand(t *testing.T) {
	t.Parallel()
	operation := regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) /`)
	route := regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE) /\S*$`) // a handler's pattern, not a message
	verbs := strings.NewReplacer("%s", "6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11", "%d", "2", "%q", `"x"`)
	fset := token.NewFileSet()
	for _, dir := range []string{"publish", "httpapi", "connect", "inbox", "ai", "aivideo", "media", "analytics", "webhooks", "apierr", "auth"} {
		files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !operation.MatchString(s) || route.MatchString(s) {
					return true
				}
				if left := inCLITerms(verbs.Replace(s)); operation.MatchString(left) {
					t.Errorf("%s: %q names an API operation with no command in apiReferences", fset.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
}
