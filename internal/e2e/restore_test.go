package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/media/s3test"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestRestoreFromBackup follows docs/OPERATIONS.md, "Backups and restore": a fleet (an API
// process and a worker on PostgreSQL and S3) publishes a post; while it runs, pg_dump takes
// its database and the bucket is copied to another; the fleet is then killed. pg_restore loads
// the dump into a new database, and a new API process on that database and the copied bucket,
// with the same REELAY_SECRET_KEY, must answer GET /posts/{id} as the old fleet did, accept
// the old API key, and serve the post's video by a signed media link with the same bytes.
func TestRestoreFromBackup(t *testing.T) {
	needPostgres(t, "the restore test needs PostgreSQL")
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	f := newFleet(t, "e2e-restore", map[string]string{"REELAY_PUBLIC_URL": base})
	api := f.serve("reelay serve --role api", addr, "api")
	workers, workerBases := f.workers(1)
	api.waitHealthy(base, 60*time.Second)
	workers[0].waitHealthy(workerBases[0], 60*time.Second)

	c := newClient(t, base, f.acct.APIKey)
	// Instagram fetches the video by a signed media link, YouTube takes it uploaded.
	channels := c.sandboxChannels(f.acct.ProjectID, []string{"youtube", "instagram"}, 0)
	video := mediatest.MP4(t, mediatest.Options{Duration: 3 * time.Second, Width: 720, Height: 1280})
	videoSHA, _ := fileSHA256(t, video)
	ids, _ := json.Marshal([]string{channels["youtube"].ID, channels["instagram"].ID})
	postID := c.publishForm(map[string]string{"project_id": f.acct.ProjectID, "channel_ids": string(ids),
		"title": "Before the backup", "caption": "published before the backup #e2e"}, video)
	checkPublished(t, c.waitSettled(postID, 90*time.Second))
	original := c.must(http.StatusOK, "GET", "/api/v1/posts/"+postID, nil)

	// The backup, taken while the fleet runs: pg_dump reads one consistent snapshot.
	schema := searchPath(t, f.dbURL)
	dump := filepath.Join(t.TempDir(), "reelay.dump")
	run(t, "pg_dump", "--format=custom", "--no-owner", "--schema="+schema, "--file="+dump, libpqURL(t, ""))
	restoredBlobURL := copyBucket(t, f.settings["REELAY_BLOB_URL"])

	// The fleet is lost.
	api.kill()
	workers[0].kill()

	// The restore: a new database, the dump loaded into it, an API process on it.
	dbName := createDatabase(t)
	run(t, "pg_restore", "--no-owner", "--exit-on-error", "--dbname="+libpqURL(t, dbName), dump)
	restoredURL := databaseURL(t, dbName, schema)

	addr2 := freeAddr(t)
	base2 := "http://" + addr2
	restored := startProc(t, "reelay serve --role api (restored)", testEnv(f.settings, map[string]string{
		"REELAY_ADDR": addr2, "REELAY_PUBLIC_URL": base2, "REELAY_DATABASE_URL": restoredURL, "REELAY_BLOB_URL": restoredBlobURL,
	}), "serve", "--role", "api")
	restored.waitHealthy(base2, 60*time.Second)
	if out := restored.out.String(); strings.Contains(out, "First start") {
		t.Errorf("the restored process made a first-start account: the restored database looked empty")
	}
	if body := httpGet(t, base2+"/readyz"); !strings.Contains(body, `"migrations":"ok"`) {
		t.Errorf("restored /readyz: %s", body)
	}

	c2 := newClient(t, base2, f.acct.APIKey)
	again := c2.must(http.StatusOK, "GET", "/api/v1/posts/"+postID, nil)
	if !reflect.DeepEqual(again, original) {
		t.Errorf("GET /posts/%s after the restore:\n%s\nbefore the backup:\n%s", postID, jsonText(again), jsonText(original))
	}

	// A media link signed with the secret key, as a worker signs the links Instagram fetches,
	// is served by the restored process from the copied bucket.
	signer, err := media.OpenStore(context.Background(), "mem://", secret.Derive(testSecretKey, "media links"), media.WithPublicURL(base2))
	if err != nil {
		t.Fatal(err)
	}
	defer signer.Close()
	link, err := signer.SignedURL(media.KeyForSHA256(videoSHA), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatalf("GET the media link: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the media link: status %d, %v", resp.StatusCode, err)
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != videoSHA {
		t.Errorf("the media link served %d bytes that are not the video published", len(body))
	}
	// A link whose signature does not match is refused: the 200 above is the key's doing.
	if resp, err := http.Get(strings.Replace(link, "sig=", "sig=A", 1)); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a forged media link: status %d, want 403", resp.StatusCode)
	}
}

// searchPath is the schema a storetest database URL names (its search_path parameter).
func searchPath(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	if schema == "" {
		t.Fatalf("database URL %s names no schema", u.Redacted())
	}
	return schema
}

// libpqURL is REELAY_TEST_DATABASE_URL as the PostgreSQL tools take it, on database dbName
// ("" keeps the URL's own).
func libpqURL(t *testing.T, dbName string) string {
	t.Helper()
	u, err := url.Parse(os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	if dbName != "" {
		u.Path = "/" + dbName
	}
	return u.String()
}

// databaseURL is reelay's REELAY_DATABASE_URL of schema in database dbName.
func databaseURL(t *testing.T, dbName, schema string) string {
	t.Helper()
	u, err := url.Parse(libpqURL(t, dbName))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// createDatabase makes an empty database on the test server, dropped at cleanup, and answers
// its name.
func createDatabase(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "reelay_restore_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, libpqURL(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), libpqURL(t, ""))
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		// FORCE: a connection of a process killed a moment ago may not be gone yet.
		if _, err := c.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	return name
}

// copyBucket copies every object of the bucket of blobURL into a new bucket on the same S3
// server, as a backup of the bucket is, and answers the new bucket's REELAY_BLOB_URL.
func copyBucket(t *testing.T, blobURL string) string {
	t.Helper()
	src, err := url.Parse(blobURL)
	if err != nil {
		t.Fatal(err)
	}
	dstURL := s3test.BlobURL(t)
	dst, err := url.Parse(dstURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client := s3test.Shared(t).Client()
	n := 0
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(src.Host)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("list bucket %s: %v", src.Host, err)
		}
		for _, obj := range page.Contents {
			if _, err := client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(dst.Host), Key: obj.Key,
				CopySource: aws.String(src.Host + "/" + aws.ToString(obj.Key))}); err != nil {
				t.Fatalf("copy %s: %v", aws.ToString(obj.Key), err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("bucket %s holds nothing to copy", src.Host)
	}
	t.Logf("copied %d objects from bucket %s to %s", n, src.Host, dst.Host)
	return dstURL
}

// run runs a command that must succeed.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
