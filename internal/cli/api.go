package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

// apiFlags are what every command calling the HTTP API shares: the server and key
// (--url, --api-key), --json and --verbose.
type apiFlags struct {
	remote
	json    bool
	verbose bool
}

// apiCommand gives cmd (a command group or a single command) the flags of an API client, as
// persistent flags so that a group's subcommands all have them.
func apiCommand(cmd *cobra.Command) *apiFlags {
	a := &apiFlags{}
	remoteCommand(cmd, &a.remote)
	fs := cmd.PersistentFlags()
	fs.BoolVar(&a.json, "json", false, "print the API's answer as JSON on stdout (nothing else goes there)")
	fs.BoolVarP(&a.verbose, "verbose", "v", false, "log retries on stderr")
	return a
}

// client makes the API client; a missing key or a malformed --url is a usage error, since
// nothing was sent.
func (a *apiFlags) client(cmd *cobra.Command) (*client.Client, error) {
	r := a.remote
	if a.verbose {
		log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelDebug}))
		r.opts = append(append([]client.Option(nil), r.opts...), client.WithLogger(log))
	}
	c, err := r.client()
	if err != nil {
		return nil, &usageError{err}
	}
	return c, nil
}

// resolveProject turns --project into a project id: a UUID is used as it is, anything else
// is looked up by name among the account's projects. Without --project, the account's only
// project; an account with several must choose, and is told which there are.
func resolveProject(ctx context.Context, c *client.Client, given string) (string, error) {
	given = strings.TrimSpace(given)
	if given != "" {
		if _, err := uuid.Parse(given); err == nil {
			return given, nil
		}
	}
	projects, err := c.ListProjects(ctx)
	if err != nil {
		return "", err
	}
	if given != "" {
		var found []client.Project
		for _, p := range projects {
			if strings.EqualFold(p.Name, given) {
				found = append(found, p)
			}
		}
		switch len(found) {
		case 1:
			return found[0].ID, nil
		case 0:
			return "", fmt.Errorf("no project named %q in this account; %s", given, projectChoices(projects))
		default:
			return "", fmt.Errorf("%d projects are named %q; give --project its id: %s", len(found), given, projectChoices(found))
		}
	}
	switch len(projects) {
	case 1:
		return projects[0].ID, nil
	case 0:
		return "", errors.New("the account has no project; create one with `reelay projects create --name NAME`")
	}
	return "", fmt.Errorf("the account has %d projects: choose one with --project (an id or a name); %s", len(projects), projectChoices(projects))
}

func projectChoices(projects []client.Project) string {
	parts := make([]string, len(projects))
	for i, p := range projects {
		parts[i] = fmt.Sprintf("%s (%s)", p.Name, p.ID)
	}
	return "projects: " + strings.Join(parts, ", ")
}

// parseAt reads --at: an RFC 3339 time with its offset ("2026-12-01T09:00:00+01:00", "...Z"),
// or a delay from now ("+2h", "+30m", "+1d", "+1d12h"). A time that is not in the future is
// refused here, before any request.
func parseAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	hint := "give an RFC 3339 time with its offset (2026-12-01T09:00:00+01:00) or a delay from now (+2h, +30m, +1d)"
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := parseDelay(rest)
		if err != nil || d <= 0 {
			return time.Time{}, usagef("--at %q: %s", s, hint)
		}
		return now.Add(d).Truncate(time.Second), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--at %q: %s", s, hint)
	}
	if !t.After(now) {
		return time.Time{}, usagef("--at %s is not in the future (now is %s)", s, now.Format(time.RFC3339))
	}
	return t, nil
}

// parseDelay reads a Go duration that may start with whole days ("1d", "2d6h").
func parseDelay(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad days in %q", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return days + d, nil
}

// isURL tells a --video or --thumbnail that names a link from one that names a local file.
func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// openUpload opens a local file for upload after checking that it is a readable regular file,
// so that a wrong path is reported before any request. The file is streamed, never read into
// memory; the caller closes it.
func openUpload(flag, path string) (*client.Upload, *os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, usagef("--%s %s: no such file", flag, path)
		}
		return nil, nil, usagef("--%s %s: %v", flag, path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, usagef("--%s %s: not a regular file", flag, path)
	}
	if info.Size() == 0 {
		return nil, nil, usagef("--%s %s: the file is empty", flag, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, usagef("--%s %s: cannot read it: %v", flag, path, err)
	}
	return &client.Upload{Reader: f, Name: info.Name(), Size: info.Size()}, f, nil
}

// parsePlatforms checks a list of platform names.
func parsePlatforms(flag string, names []string) ([]client.Platform, error) {
	var out []client.Platform
	for _, n := range names {
		p := client.Platform(strings.ToLower(strings.TrimSpace(n)))
		if p == "" {
			continue
		}
		if !knownPlatform(p) {
			return nil, usagef("--%s: unknown platform %q; one of %s", flag, n, platformList())
		}
		out = append(out, p)
	}
	return out, nil
}

func knownPlatform(p client.Platform) bool {
	for _, q := range client.Platforms {
		if p == q {
			return true
		}
	}
	return false
}

func platformList() string {
	names := make([]string, len(client.Platforms))
	for i, p := range client.Platforms {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// checkDate reads a YYYY-MM-DD day flag.
func checkDate(flag, s string) error {
	if s == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return usagef("--%s %q: give a day as YYYY-MM-DD", flag, s)
	}
	return nil
}
