package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Figures are a published destination's metrics at one reading. A nil field is a figure the
// platform does not give: stored as NULL, which SQL's SUM skips, so that a total is NULL only
// when no destination gave the figure, and is never a zero made up of missing values.
type Figures struct {
	Views            *int64
	Likes            *int64
	Comments         *int64
	Shares           *int64
	Impressions      *int64
	Reach            *int64
	Saves            *int64
	WatchTimeSeconds *int64
}

// figureColumns are the columns of Figures, in its field order, in published_items and
// metric_samples alike.
const figureColumns = `views, likes, comments, shares, impressions, reach, saves, watch_time_seconds`

// Fields are the figures' fields, in a fixed order, for code that treats them alike.
func (f *Figures) Fields() []**int64 { return f.fields() }

func (f *Figures) fields() []**int64 {
	return []**int64{&f.Views, &f.Likes, &f.Comments, &f.Shares, &f.Impressions, &f.Reach, &f.Saves, &f.WatchTimeSeconds}
}

// args are the figures as SQL arguments (nil for NULL).
func (f Figures) args() []any {
	out := make([]any, 0, 8)
	for _, p := range f.fields() {
		if *p == nil {
			out = append(out, nil)
		} else {
			out = append(out, **p)
		}
	}
	return out
}

// scanTargets are what scanning figures reads into; apply stores them in f.
type figureScan [8]sql.NullInt64

func (s *figureScan) dest() []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

func (s *figureScan) apply(f *Figures) {
	for i, p := range f.fields() {
		if s[i].Valid {
			v := s[i].Int64
			*p = &v
		} else {
			*p = nil
		}
	}
}

// Add adds g to f figure by figure. A figure missing from one side keeps the other's value,
// and one missing from both stays missing: an unreported figure is never summed as 0.
func (f *Figures) Add(g Figures) {
	mine, theirs := f.fields(), g.fields()
	for i, p := range mine {
		switch v := *theirs[i]; {
		case v == nil:
		case *p == nil:
			x := *v
			*p = &x
		default:
			x := **p + *v
			*p = &x
		}
	}
}

// Equal reports whether two readings are the same figure for figure (nil equals only nil).
func (f Figures) Equal(g Figures) bool {
	a, b := f.fields(), g.fields()
	for i := range a {
		x, y := *a[i], *b[i]
		if (x == nil) != (y == nil) || (x != nil && *x != *y) {
			return false
		}
	}
	return true
}

// Kinds of audience reads: a published item's figures and its comments are read on schedules
// of their own.
const (
	ReadMetrics  = "metrics"
	ReadComments = "comments"
)

// addPublishedItem starts following a destination that has just been published: its figures
// and comments become due at once, and it counts in figure_totals. The caller holds the post's
// lock, so two destinations of one post publishing at once cannot both count as its first.
// A settling step on PostgreSQL makes the same writes inside its statement when it can
// (saveStepWithPost).
func (t *Tx) addPublishedItem(ctx context.Context, destinationID string, at time.Time) error {
	if t.dialect == Postgres {
		// The data-modifying WITH items run whatever the statement selects.
		_, err := t.tx.ExecContext(ctx, `WITH `+publishedItemWrites("$1", "$2", "$3")+` SELECT 1`,
			destinationID, at, publishedDay(at))
		if err != nil {
			return fmt.Errorf("store: follow published destination: %w", err)
		}
		return nil
	}
	var it struct {
		accountID, projectID, platform string
		firstOfPost, firstOnPlatform   bool
	}
	err := t.tx.QueryRowContext(ctx, insertPublishedItem("$1", "$2", "$3"), destinationID, at, publishedDay(at)).
		Scan(&it.accountID, &it.projectID, &it.platform, &it.firstOfPost, &it.firstOnPlatform)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: follow published destination: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO figure_totals (account_id, project_id, platform, day, destinations, posts, first_posts)
		VALUES ($1, $2, $3, $4, 1, $5, $6) `+countPublishedItem,
		it.accountID, it.projectID, it.platform, publishedDay(at), boolInt(it.firstOnPlatform), boolInt(it.firstOfPost))
	if err != nil {
		return fmt.Errorf("store: count published destination: %w", err)
	}
	return nil
}

// publishedItemWrites are addPublishedItem's two inserts as the WITH items of a PostgreSQL
// statement (named item and counted), for the destination, time and day in the placeholders
// given.
func publishedItemWrites(destination, at, day string) string {
	return `item AS (` + insertPublishedItem(destination, at, day) + `),
	counted AS (INSERT INTO figure_totals (account_id, project_id, platform, day, destinations, posts, first_posts)
		SELECT account_id, project_id, platform, ` + day + `, 1, CASE WHEN first_on_platform THEN 1 ELSE 0 END,
			CASE WHEN first_of_post THEN 1 ELSE 0 END FROM item
		` + countPublishedItem + `)`
}

// publishedDay is a published item's day: its time's UTC date.
func publishedDay(at time.Time) string { return at.UTC().Format(time.DateOnly) }

// insertPublishedItem reads the destination in placeholder destination and inserts its
// published_items row, published at placeholder at on day. It answers no row when the
// destination was followed before (ON CONFLICT), which then counts nothing again.
func insertPublishedItem(destination, at, day string) string {
	return `INSERT INTO published_items (destination_id, account_id, project_id, post_id,
	channel_id, platform, published_at, published_day, first_of_post, first_on_platform, metrics_next_at, comments_next_at)
	SELECT d.id, p.account_id, p.project_id, d.post_id, d.channel_id, d.platform, ` + at + `, ` + day + `,
		NOT EXISTS (SELECT 1 FROM published_items o WHERE o.post_id = d.post_id),
		NOT EXISTS (SELECT 1 FROM published_items o WHERE o.post_id = d.post_id AND o.platform = d.platform),
		` + at + `, ` + at + `
	FROM destinations d JOIN posts p ON p.id = d.post_id WHERE d.id = ` + destination + `
	ON CONFLICT (destination_id) DO NOTHING
	RETURNING account_id, project_id, platform, first_of_post, first_on_platform`
}

// countPublishedItem ends the insert of a published destination's count into its day's
// figure_totals row.
const countPublishedItem = `ON CONFLICT (account_id, day, project_id, platform) DO UPDATE SET destinations = figure_totals.destinations + 1,
	posts = figure_totals.posts + excluded.posts, first_posts = figure_totals.first_posts + excluded.first_posts`

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addToTotals adds the change from old to merged figures of one destination to its day's
// figure_totals row: a figure given for the first time adds its value and one to its count.
func (t *Tx) addToTotals(ctx context.Context, key totalsKey, old, merged Figures) error {
	var sets []string
	args := []any{key.accountID, key.projectID, key.platform, key.day}
	names := strings.Split(figureColumns, ", ")
	newFields := merged.fields()
	for i, o := range old.fields() {
		nw := *newFields[i]
		if nw == nil {
			continue
		}
		var delta, count int64 = *nw, 1
		if *o != nil {
			delta, count = *nw-**o, 0
		}
		if delta == 0 && count == 0 {
			continue
		}
		args = append(args, delta, count)
		sets = append(sets, fmt.Sprintf("%[1]s = %[1]s + $%[2]d, %[1]s_n = %[1]s_n + $%[3]d", names[i], len(args)-1, len(args)))
	}
	if len(sets) == 0 {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE figure_totals SET `+strings.Join(sets, ", ")+`
		WHERE account_id = $1 AND project_id = $2 AND platform = $3 AND day = $4`, args...)
	if err != nil {
		return fmt.Errorf("store: update totals: %w", err)
	}
	return nil
}

// totalsKey is a figure_totals row's key.
type totalsKey struct{ accountID, projectID, platform, day string }

// compare orders keys as figure_totals' primary key does: account, day, project, platform.
func (k totalsKey) compare(o totalsKey) int {
	return cmp.Or(cmp.Compare(k.accountID, o.accountID), cmp.Compare(k.day, o.day),
		cmp.Compare(k.projectID, o.projectID), cmp.Compare(k.platform, o.platform))
}

// totalsChange is a destination's figures before and after a reading, for addToTotals.
type totalsChange struct {
	key         totalsKey
	old, merged Figures
}

// RebuildFigureTotals recomputes an account's figure_totals from its published items: the
// repair for totals that drifted (they never should), and what tests compare the running
// totals with.
func (s *Store) RebuildFigureTotals(ctx context.Context, accountID string) error {
	counts := make([]string, 0, 16)
	for _, c := range strings.Split(figureColumns, ", ") {
		counts = append(counts, "COALESCE(SUM("+c+"), 0)", "COUNT("+c+")")
	}
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.ExecContext(ctx, `DELETE FROM figure_totals WHERE account_id = $1`, accountID); err != nil {
			return fmt.Errorf("store: clear totals: %w", err)
		}
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO figure_totals (account_id, project_id, platform, day, destinations,
			posts, first_posts, `+totalsColumns()+`)
			SELECT account_id, project_id, platform, published_day, COUNT(*),
			SUM(CASE WHEN first_on_platform THEN 1 ELSE 0 END), SUM(CASE WHEN first_of_post THEN 1 ELSE 0 END), `+
			strings.Join(counts, ", ")+`
			FROM published_items WHERE account_id = $1 GROUP BY account_id, project_id, platform, published_day`, accountID)
		if err != nil {
			return fmt.Errorf("store: rebuild totals: %w", err)
		}
		return nil
	})
}

// totalsColumns are figure_totals' figure columns: each figure's sum, then its count.
func totalsColumns() string {
	var out []string
	for _, c := range strings.Split(figureColumns, ", ") {
		out = append(out, c, c+"_n")
	}
	return strings.Join(out, ", ")
}

// AudienceTarget is a published destination whose figures or comments are to be read.
type AudienceTarget struct {
	DestinationID string
	AccountID     string
	ProjectID     string
	PostID        string
	ChannelID     string
	Platform      string
	// ExternalID is the platform's id of the published item.
	ExternalID  string
	PublishedAt time.Time
}

const audienceTargetSelect = `i.destination_id, i.account_id, i.project_id, i.post_id, i.channel_id, i.platform,
	d.external_id, i.published_at FROM published_items i JOIN destinations d ON d.id = i.destination_id`

func scanAudienceTarget(r scanner) (AudienceTarget, error) {
	var t AudienceTarget
	err := r.Scan(&t.DestinationID, &t.AccountID, &t.ProjectID, &t.PostID, &t.ChannelID, &t.Platform, &t.ExternalID, &t.PublishedAt)
	return t, err
}

// AudienceFilter selects the targets of a read.
type AudienceFilter struct {
	// Kind is ReadMetrics or ReadComments.
	Kind string
	// AccountID limits the read to one account ("" = all, for the periodic job); PostID and
	// ProjectID narrow it further, Platforms to some platforms.
	AccountID string
	ProjectID string
	PostID    string
	Platforms []string
	// DueBy keeps only targets whose next read is due by then (the periodic job); nil takes
	// every target still followed, newest first (a sync asked for).
	DueBy *time.Time
	Limit int
}

// AudienceTargets lists the published destinations to read.
func (s *Store) AudienceTargets(ctx context.Context, f AudienceFilter) ([]AudienceTarget, error) {
	next := "i.metrics_next_at"
	if f.Kind == ReadComments {
		next = "i.comments_next_at"
	}
	q := newWhere()
	q.add(next + " IS NOT NULL")
	if f.AccountID != "" {
		if !ValidID(f.AccountID) {
			return nil, nil
		}
		q.add("i.account_id = ?", f.AccountID)
	}
	if f.ProjectID != "" {
		if !ValidID(f.ProjectID) {
			return nil, nil
		}
		q.add("i.project_id = ?", f.ProjectID)
	}
	if f.PostID != "" {
		if !ValidID(f.PostID) {
			return nil, nil
		}
		q.add("i.post_id = ?", f.PostID)
	}
	if len(f.Platforms) > 0 {
		q.in("i.platform", f.Platforms)
	}
	order := "i.published_at DESC, i.destination_id"
	if f.DueBy != nil {
		q.add(next+" <= ?", *f.DueBy)
		order = next
	}
	targets, err := collect(scanAudienceTarget)(s.read.QueryContext(ctx, `SELECT `+audienceTargetSelect+`
		WHERE `+q.sql()+` ORDER BY `+order+q.limit(f.Limit), q.args...))
	if err != nil {
		return nil, fmt.Errorf("store: audience targets: %w", err)
	}
	return targets, nil
}

// Reading is one destination's figures as read at At; Next is when they are next due.
type Reading struct {
	DestinationID string
	Figures       Figures
	At            time.Time
	Next          time.Time
}

// SaveReadings stores figures read from a platform, in one transaction. A figure the platform
// gave before but left out this time keeps its last value (platforms lag and skip figures
// now and then; a figure never disappears); the time series gains a sample only when the
// figures changed.
func (s *Store) SaveReadings(ctx context.Context, readings []Reading) error {
	if len(readings) == 0 {
		return nil
	}
	// Each item is locked as it is read, so that the totals gain the difference from the
	// figures another transaction saved meanwhile, not from the ones it replaced. Rows are
	// locked in one order whatever the order of the readings: the published items by
	// destination, then the totals, last, by key, as a batch of settling steps adds to them
	// (settling.go). Two transactions that update several of the same rows then never wait
	// for each other in a cycle.
	readings = slices.Clone(readings)
	slices.SortStableFunc(readings, func(a, b Reading) int { return cmp.Compare(a.DestinationID, b.DestinationID) })
	return s.InTx(ctx, func(tx *Tx) error {
		var changes []totalsChange
		for _, r := range readings {
			var before figureScan
			var key totalsKey
			err := tx.tx.QueryRowContext(ctx, `SELECT account_id, project_id, platform, published_day, `+figureColumns+`
				FROM published_items WHERE destination_id = $1`+tx.forUpdate(), r.DestinationID).
				Scan(append([]any{&key.accountID, &key.projectID, &key.platform, &key.day}, before.dest()...)...)
			if err != nil {
				return fmt.Errorf("store: read figures: %w", notFound(err))
			}
			var old Figures
			before.apply(&old)
			merged := r.Figures
			for i, p := range merged.fields() {
				if *p == nil {
					*p = *old.fields()[i]
				}
			}
			args := append(merged.args(), r.At, r.Next, r.DestinationID)
			_, err = tx.tx.ExecContext(ctx, `UPDATE published_items SET views = $1, likes = $2, comments = $3, shares = $4,
				impressions = $5, reach = $6, saves = $7, watch_time_seconds = $8, metrics_synced_at = $9,
				metrics_next_at = $10, metrics_error = '' WHERE destination_id = $11`, args...)
			if err != nil {
				return fmt.Errorf("store: save figures: %w", err)
			}
			if merged.Equal(old) {
				continue
			}
			changes = append(changes, totalsChange{key, old, merged})
			_, err = tx.tx.ExecContext(ctx, `INSERT INTO metric_samples (destination_id, captured_at, `+figureColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				ON CONFLICT (destination_id, captured_at) DO NOTHING`,
				append([]any{r.DestinationID, r.At}, r.Figures.args()...)...)
			if err != nil {
				return fmt.Errorf("store: save sample: %w", err)
			}
		}
		slices.SortFunc(changes, func(a, b totalsChange) int { return a.key.compare(b.key) })
		for _, c := range changes {
			if err := tx.addToTotals(ctx, c.key, c.old, c.merged); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetAudienceSchedule records the outcome of a read that brought nothing to store: msg is the
// failure ("" for none) and next when the destinations are due again (nil: never).
func (s *Store) SetAudienceSchedule(ctx context.Context, kind string, destinationIDs []string, msg string, next *time.Time) error {
	if len(destinationIDs) == 0 {
		return nil
	}
	prefix := "metrics"
	if kind == ReadComments {
		prefix = "comments"
	}
	q := newWhere()
	args := []any{msg, next}
	q.args = args
	q.in("destination_id", destinationIDs)
	_, err := s.write.ExecContext(ctx, `UPDATE published_items SET `+prefix+`_error = $1, `+prefix+`_next_at = $2
		WHERE `+q.sql(), q.args...)
	if err != nil {
		return fmt.Errorf("store: set %s schedule: %w", kind, err)
	}
	return nil
}

// AnalyticsFilter selects published destinations for totals and listings.
type AnalyticsFilter struct {
	ProjectID string
	PostID    string
	Platform  string
	// From and Until bound the destinations' publish time: From <= published_at < Until.
	From  *time.Time
	Until *time.Time
}

func (f AnalyticsFilter) where(accountID string) *where {
	q := newWhere()
	q.add("i.account_id = ?", accountID)
	if f.ProjectID != "" {
		q.add("i.project_id = ?", f.ProjectID)
	}
	if f.PostID != "" {
		q.add("i.post_id = ?", f.PostID)
	}
	if f.Platform != "" {
		q.add("i.platform = ?", f.Platform)
	}
	if f.From != nil {
		q.add("i.published_at >= ?", *f.From)
	}
	if f.Until != nil {
		q.add("i.published_at < ?", *f.Until)
	}
	return q
}

// validIDs reports whether the filter's ids could exist (a malformed id matches nothing).
func (f AnalyticsFilter) validIDs() bool {
	return (f.ProjectID == "" || ValidID(f.ProjectID)) && (f.PostID == "" || ValidID(f.PostID))
}

// PlatformTotals are the summed latest figures of one platform's destinations.
type PlatformTotals struct {
	Platform string
	// Posts counts distinct posts, Destinations the published destinations (a post may go to
	// two channels of one platform).
	Posts        int
	Destinations int
	Figures      Figures
}

// totalsWhere selects rows of figure_totals: the account's, of the filter's project, platform
// and days (From and Until taken as UTC days: From's day to the day before Until's).
func (f AnalyticsFilter) totalsWhere(accountID string) *where {
	q := newWhere()
	q.add("account_id = ?", accountID)
	if f.ProjectID != "" {
		q.add("project_id = ?", f.ProjectID)
	}
	if f.Platform != "" {
		q.add("platform = ?", f.Platform)
	}
	if f.From != nil {
		q.add("day >= ?", f.From.UTC().Format(time.DateOnly))
	}
	if f.Until != nil {
		q.add("day < ?", f.Until.UTC().Format(time.DateOnly))
	}
	return q
}

// totalsSums sums every figure column of figure_totals with its count of non-null values.
func totalsSums() string {
	var sums []string
	for _, c := range strings.Split(totalsColumns(), ", ") {
		sums = append(sums, "CAST(SUM("+c+") AS BIGINT)")
	}
	return strings.Join(sums, ", ")
}

// DayTotals are the latest figures of the destinations published on one UTC day.
type DayTotals struct {
	Day          time.Time
	Destinations int
	Figures      Figures
}

// AnalyticsByDay sums an account's latest figures by the UTC day their destinations were
// published, for the same filters as AnalyticsTotals, oldest day first; days without a
// published destination are left out.
func (s *Store) AnalyticsByDay(ctx context.Context, accountID string, f AnalyticsFilter) ([]DayTotals, error) {
	if !f.validIDs() {
		return nil, nil
	}
	q := f.totalsWhere(accountID)
	rows, err := s.read.QueryContext(ctx, `SELECT day, CAST(SUM(destinations) AS BIGINT), `+totalsSums()+`
		FROM figure_totals WHERE `+q.sql()+` GROUP BY day ORDER BY day`, q.args...)
	if err != nil {
		return nil, fmt.Errorf("store: analytics by day: %w", err)
	}
	defer rows.Close()
	var out []DayTotals
	for rows.Next() {
		var t DayTotals
		var day string
		var v [16]int64
		dest := []any{&day, &t.Destinations}
		for i := range v {
			dest = append(dest, &v[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: analytics by day: %w", err)
		}
		if t.Day, err = time.Parse(time.DateOnly, day[:min(len(day), 10)]); err != nil {
			return nil, fmt.Errorf("store: analytics by day: day %q: %w", day, err)
		}
		for i, p := range t.Figures.fields() {
			if sum, n := v[2*i], v[2*i+1]; n > 0 {
				*p = &sum
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: analytics by day: %w", err)
	}
	return out, nil
}

// AnalyticsTotals sums an account's latest figures per platform, and counts its distinct posts
// across platforms, from figure_totals: a few rows per day whatever the number of
// destinations. It filters by project, platform and days (From and Until are taken as UTC
// days: From's day to the day before Until's); PostID does not apply.
func (s *Store) AnalyticsTotals(ctx context.Context, accountID string, f AnalyticsFilter) (perPlatform []PlatformTotals, posts int, err error) {
	if !f.validIDs() {
		return nil, 0, nil
	}
	q := f.totalsWhere(accountID)
	rows, err := s.read.QueryContext(ctx, `SELECT platform, CAST(SUM(destinations) AS BIGINT), CAST(SUM(posts) AS BIGINT),
		CAST(SUM(first_posts) AS BIGINT), `+totalsSums()+`
		FROM figure_totals WHERE `+q.sql()+` GROUP BY platform ORDER BY platform`, q.args...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: analytics totals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t PlatformTotals
		var firstPosts int
		var v [16]int64
		dest := []any{&t.Platform, &t.Destinations, &t.Posts, &firstPosts}
		for i := range v {
			dest = append(dest, &v[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, 0, fmt.Errorf("store: analytics totals: %w", err)
		}
		for i, p := range t.Figures.fields() {
			if sum, n := v[2*i], v[2*i+1]; n > 0 {
				*p = &sum
			}
		}
		perPlatform = append(perPlatform, t)
		posts += firstPosts
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: analytics totals: %w", err)
	}
	if f.Platform != "" && len(perPlatform) == 1 {
		// Within one platform, a post counts where it was first published there.
		posts = perPlatform[0].Posts
	}
	return perPlatform, posts, nil
}

// ItemFigures are one published destination's latest figures.
type ItemFigures struct {
	DestinationID string
	PostID        string
	ProjectID     string
	ChannelID     string
	Platform      string
	ExternalID    string
	URL           string
	PublishedAt   time.Time
	Figures       Figures
	// SyncedAt is when the figures were last read (nil: never); Error the last read's failure.
	SyncedAt *time.Time
	Error    string
}

// ListItemFigures lists an account's published destinations with their latest figures, newest
// first, limit at a time; after continues after the (published_at, destination id) of the
// previous page's last item.
func (s *Store) ListItemFigures(ctx context.Context, accountID string, f AnalyticsFilter, limit int, afterTime *time.Time, afterID string) ([]ItemFigures, error) {
	if !f.validIDs() {
		return nil, nil
	}
	q := f.where(accountID)
	if afterTime != nil {
		q.add("(i.published_at < ? OR (i.published_at = ? AND i.destination_id < ?))", *afterTime, *afterTime, afterID)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT i.destination_id, i.post_id, i.project_id, i.channel_id, i.platform,
		d.external_id, d.url, i.published_at, i.metrics_synced_at, i.metrics_error, `+prefixed("i.", figureColumns)+`
		FROM published_items i JOIN destinations d ON d.id = i.destination_id
		WHERE `+q.sql()+` ORDER BY i.published_at DESC, i.destination_id DESC`+q.limit(limit), q.args...)
	items, err := collect(func(r scanner) (ItemFigures, error) {
		var it ItemFigures
		var synced sql.NullTime
		var fs figureScan
		err := r.Scan(append([]any{&it.DestinationID, &it.PostID, &it.ProjectID, &it.ChannelID, &it.Platform,
			&it.ExternalID, &it.URL, &it.PublishedAt, &synced, &it.Error}, fs.dest()...)...)
		fs.apply(&it.Figures)
		it.SyncedAt = timePtr(synced)
		return it, err
	})(rows, err)
	if err != nil {
		return nil, fmt.Errorf("store: list figures: %w", err)
	}
	return items, nil
}

// Sample is one reading in a destination's time series.
type Sample struct {
	At      time.Time
	Figures Figures
}

// MetricSamples returns the time series of some of an account's destinations, oldest first,
// keyed by destination id.
func (s *Store) MetricSamples(ctx context.Context, accountID string, destinationIDs []string) (map[string][]Sample, error) {
	out := map[string][]Sample{}
	if len(destinationIDs) == 0 {
		return out, nil
	}
	q := newWhere()
	q.add("i.account_id = ?", accountID)
	q.in("m.destination_id", destinationIDs)
	rows, err := s.read.QueryContext(ctx, `SELECT m.destination_id, m.captured_at, `+prefixed("m.", figureColumns)+`
		FROM metric_samples m JOIN published_items i ON i.destination_id = m.destination_id
		WHERE `+q.sql()+` ORDER BY m.destination_id, m.captured_at`, q.args...)
	if err != nil {
		return nil, fmt.Errorf("store: metric samples: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var sm Sample
		var fs figureScan
		if err := rows.Scan(append([]any{&id, &sm.At}, fs.dest()...)...); err != nil {
			return nil, fmt.Errorf("store: metric samples: %w", err)
		}
		fs.apply(&sm.Figures)
		out[id] = append(out[id], sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: metric samples: %w", err)
	}
	return out, nil
}

// prefixed qualifies each column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ", ")
	for i := range parts {
		parts[i] = prefix + parts[i]
	}
	return strings.Join(parts, ", ")
}

// PublishedItem returns one followed published destination.
func (s *Store) PublishedItem(ctx context.Context, destinationID string) (AudienceTarget, error) {
	t, err := scanAudienceTarget(s.read.QueryRowContext(ctx, `SELECT `+audienceTargetSelect+`
		WHERE i.destination_id = $1`, destinationID))
	return t, notFound(err)
}
