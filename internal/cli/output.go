package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/reelay/reelay/client"
)

// Exit codes of the reelay command, documented in the README: scripts tell a mistake in the
// command line from a server that is down, a refused key, or a post that did not go out.
const (
	exitOK = 0
	// exitError: the server answered an error, or anything not covered below.
	exitError = 1
	// exitUsage: the command line is wrong (unknown flag, bad value, unreadable file, no API
	// key); nothing was sent.
	exitUsage = 2
	// exitUnreachable: no answer from the server.
	exitUnreachable = 3
	// exitUnauthorized: the server refused the API key (401).
	exitUnauthorized = 4
	// exitNotPublished: the post settled with failed destinations (failed or
	// partially_published); what is known was printed.
	exitNotPublished = 5
	// exitInterrupted: stopped by Ctrl-C (128 + SIGINT, as shells report it).
	exitInterrupted = 130
)

// usageError is a mistake in the command line, found before any request.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef makes a usageError.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// codedError ends the command with a chosen exit code and message.
type codedError struct {
	code int
	msg  string
}

func (e *codedError) Error() string { return e.msg }

// exitCode tells the code err ends the command with.
func exitCode(err error) int {
	var coded *codedError
	var usage *usageError
	var reqErr *client.RequestError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &coded):
		return coded.code
	case errors.As(err, &usage), isCobraUsage(err):
		return exitUsage
	case client.IsUnauthorized(err):
		return exitUnauthorized
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &reqErr):
		return exitUnreachable
	}
	return exitError
}

// isCobraUsage recognises the errors cobra makes itself for a command line it cannot parse
// (the flag errors go through SetFlagErrorFunc, the rest have only their text).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// describeError is what the command prints on stderr for err: the server's message, then
// each field at fault on a line of its own.
func describeError(err error) string {
	var reqErr *client.RequestError
	var usage *usageError
	if errors.As(err, &usage) {
		return usage.Error()
	}
	if e, ok := client.AsError(err); ok {
		var b strings.Builder
		if client.IsUnauthorized(err) {
			b.WriteString("the API key was refused (expired or revoked?)")
			if e.Message != "" {
				b.WriteString(": " + e.Message)
			}
			b.WriteString("\nset REELAY_API_KEY (or --api-key) to a live key; `reelay keys create` makes one")
		} else {
			b.WriteString(inCLITerms(withoutFieldList(e)))
			if e.Code != "" {
				fmt.Fprintf(&b, " (%d %s)", e.StatusCode, e.Code)
			}
		}
		fields := make([]string, 0, len(e.Fields))
		for f := range e.Fields {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			fmt.Fprintf(&b, "\n  %s: %s", f, inCLITerms(e.Fields[f]))
		}
		if e.PostID != "" {
			fmt.Fprintf(&b, "\n  existing post: %s (reelay posts get %s)", e.PostID, e.PostID)
			if e.Code == client.CodeDuplicatePost {
				b.WriteString("\n  add --allow-duplicate to publish it again anyway")
			}
		}
		if e.RetryAfter > 0 {
			fmt.Fprintf(&b, "\n  retry after %s", e.RetryAfter.Round(time.Second))
		}
		if e.RequestID != "" {
			fmt.Fprintf(&b, "\n  request id: %s", e.RequestID)
		}
		return b.String()
	}
	if errors.As(err, &reqErr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		where := reqErr.URL
		if u, perr := url.Parse(reqErr.URL); perr == nil {
			where = u.Scheme + "://" + u.Host
		}
		return fmt.Sprintf("cannot reach reelay at %s: %v\nis the server running, and is --url (REELAY_URL) right?", where, reqErr.Err)
	}
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	return err.Error()
}

// apiReferences are the API operations the server's messages point to ("connect one with
// POST /channels"), each with the command that does the same here, which a person at the
// command line is told instead. Each names the operation whole, so that GET /channels/{id}/options
// is not read as another operation's start.
var apiReferences = []struct {
	api *regexp.Regexp
	cli string
}{
	{regexp.MustCompile(`GET /channels/\{id\}/options`), "`reelay channels options <channel id>`"},
	{regexp.MustCompile(`GET /channels\?projectId=([0-9a-f-]+)`), "`reelay channels list --project $1`"},
	{regexp.MustCompile(`POST /channels\b`), "`reelay channels connect`"},
	{regexp.MustCompile(`GET /posts/\{id\}`), "`reelay posts get <post id>`"},
	{regexp.MustCompile(`GET /projects\b`), "`reelay projects list`"},
	{regexp.MustCompile(`add sandbox=true`), "add --sandbox-consent (or --sandbox)"},
}

// inCLITerms is a server message with the API operations it names replaced by the commands
// that do the same (apiReferences).
func inCLITerms(msg string) string {
	for _, r := range apiReferences {
		msg = r.api.ReplaceAllString(msg, r.cli)
	}
	return msg
}

// withoutFieldList is an error's message without the list of fields at fault the server
// appends to it ("invalid request: caption: …; title: …"), since the fields are printed one
// per line after it; any other message is kept whole.
func withoutFieldList(e *client.Error) string {
	if len(e.Fields) == 0 {
		return e.Error()
	}
	fields := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f + ": " + e.Fields[f]
	}
	if head, ok := strings.CutSuffix(e.Message, ": "+strings.Join(parts, "; ")); ok && head != "" {
		return head
	}
	return e.Error()
}

// reportError prints err for a person and answers the exit code.
func reportError(w io.Writer, err error) int {
	code := exitCode(err)
	fmt.Fprintln(w, "reelay:", describeError(err))
	if code == exitUsage && isCobraUsage(err) {
		fmt.Fprintln(w, "run 'reelay help' or add --help to a command for its usage")
	}
	return code
}

// printJSON writes v as indented JSON: what --json prints, alone on stdout.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newTable is an aligned table on w; Flush it.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// dash shows an empty value as "-", so that table columns stay aligned and readable.
func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// oneLine flattens s to one line of at most n characters, for a table cell.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// timeCell shows a time in the local zone to the second, "-" for none.
func timeCell(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339)
}

// figure shows a metric, "-" when the platform does not give it (not zero: the API keeps the
// difference, so does the table).
func figure(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *v)
}

// humanBytes shows n bytes in decimal units (1 MB = 1,000,000 bytes).
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// isTerminal tells whether w is a terminal, where progress can be redrawn in place; anywhere
// else (a file, a pipe, a CI log) progress is printed as plain lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the width of the terminal w is, 0 when unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
