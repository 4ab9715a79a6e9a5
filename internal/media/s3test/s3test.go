// Package s3test runs a real S3-compatible object store for tests: SeaweedFS (`weed server
// -s3`, built by install-seaweedfs.sh beside this file) on loopback, one per test binary,
// with a bucket of each test's own.
//
// Where the binary is missing, tests that need it skip, saying how to build it, unless
// REELAY_TEST_REQUIRE_S3=1 (CI), which fails them instead.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	// EnvRequire set to 1 fails tests that need the server where it cannot run.
	EnvRequire = "REELAY_TEST_REQUIRE_S3"
	// EnvWeed names the weed binary; by default the one install-seaweedfs.sh builds.
	EnvWeed = "REELAY_TEST_WEED"

	// Version is the SeaweedFS module version install-seaweedfs.sh builds.
	Version = "v0.0.0-20261109003541-7506e5f91cd6"

	region = "us-east-1"
)

// Server is a running SeaweedFS with its S3 gateway at Endpoint. It checks request
// signatures: a client must sign with AccessKey and SecretKey.
type Server struct {
	Endpoint  string
	AccessKey string
	SecretKey string

	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Binary answers the path of the weed binary, or why there is none.
func Binary() (string, error) {
	if p := os.Getenv(EnvWeed); p != "" {
		return p, nil
	}
	cache := os.Getenv("REELAY_PEERS_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "reelay-peers")
	}
	p := filepath.Join(cache, "seaweedfs-"+Version, "weed")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("SeaweedFS is not built (%s): run internal/media/s3test/install-seaweedfs.sh, or set %s", p, EnvWeed)
	}
	return p, nil
}

// Start runs a SeaweedFS server (master, volume, filer and S3 gateway in one process) keeping
// its data under dir, and waits until its S3 gateway answers.
func Start(dir string) (*Server, error) {
	weed, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{AccessKey: "reelay-test", SecretKey: randomHex(16), dir: dir}
	identities := fmt.Sprintf(`{"identities":[{"name":"reelay","credentials":[{"accessKey":%q,"secretKey":%q}],`+
		`"actions":["Admin","Read","Write","List","Tagging"]}]}`, s.AccessKey, s.SecretKey)
	config := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(config, []byte(identities), 0o600); err != nil {
		return nil, err
	}
	// A port taken between the check and weed's own bind makes weed exit: then try others.
	var lastErr error
	for range 5 {
		ports, err := freePorts(4)
		if err != nil {
			return nil, err
		}
		if lastErr = s.run(weed, config, ports); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func (s *Server) run(weed, config string, ports []int) error {
	data := filepath.Join(s.dir, "data-"+strconv.Itoa(ports[0]))
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(s.dir, "weed-"+strconv.Itoa(ports[0])+".log"))
	if err != nil {
		return err
	}
	s.cmd = exec.Command(weed, "server",
		"-dir="+data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+strconv.Itoa(ports[0]), "-volume.port="+strconv.Itoa(ports[1]),
		"-filer.port="+strconv.Itoa(ports[2]),
		"-s3", "-s3.port="+strconv.Itoa(ports[3]), "-s3.config="+config,
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		// Small volumes, as many as the disk holds: the default preallocates 30 GB each.
		"-master.volumeSizeLimitMB=256", "-volume.max=0")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	setParentDeathSignal(s.cmd)
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return err
	}
	s.log, s.done = log, make(chan struct{})
	go func() { s.cmd.Wait(); close(s.done) }()
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(ports[3])

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		// The gateway answers an unsigned request with 403 once it runs; buckets can be
		// made a moment later, when the filer behind it is up.
		if err := s.CreateBucket(ctx, "reelay-ready-check"); err == nil {
			return nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(log.Name())
			return fmt.Errorf("s3test: weed server exited at start: %s", tail(out, 2000))
		case <-ctx.Done():
			s.Stop()
			out, _ := os.ReadFile(log.Name())
			return fmt.Errorf("s3test: weed server did not answer within 60 s: %s", tail(out, 2000))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop kills the server and waits for it.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
	if s.log != nil {
		s.log.Close()
	}
}

// Client is an S3 client of the server, signing as its one identity.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		HTTPClient:   &http.Client{Timeout: 30 * time.Second},
	})
}

// CreateBucket makes a bucket named name.
func (s *Server) CreateBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	return err
}

// BlobURL is reelay's REELAY_BLOB_URL of bucket on this server. The credentials are not in
// it: reelay takes them from the AWS environment (Env).
func (s *Server) BlobURL(bucket string) string {
	return "s3://" + bucket + "?" + url.Values{
		"endpoint":       {s.Endpoint},
		"region":         {region},
		"use_path_style": {"true"},
		"disable_https":  {"true"},
	}.Encode()
}

// Env is the AWS environment that gives a process the server's credentials.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=" + region}
}

var shared struct {
	sync.Mutex
	srv *Server
	err error
	dir string
}

// Shared answers the test binary's server, started at its first use, and puts its
// credentials in this process's environment, where reelay's media store finds them. t skips
// where the server cannot run, unless EnvRequire is set. Call StopShared from TestMain.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = startShared()
	}
	if shared.err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1, but the S3 server cannot run: %v", EnvRequire, shared.err)
		}
		t.Skipf("no S3 server: %v", shared.err)
	}
	return shared.srv
}

func startShared() (*Server, error) {
	dir, err := os.MkdirTemp("", "reelay-s3test-")
	if err != nil {
		return nil, err
	}
	srv, err := Start(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	shared.dir = dir
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	return srv, nil
}

// StopShared stops the shared server, if one was started, and deletes its data.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
		os.RemoveAll(shared.dir)
		shared.srv = nil
	}
}

// BlobURL makes a new, empty bucket on the shared server and answers its REELAY_BLOB_URL.
func BlobURL(t testing.TB) string {
	t.Helper()
	srv := Shared(t)
	name := "t-" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.CreateBucket(ctx, name); err != nil {
		t.Fatalf("s3test: creating bucket %s: %v", name, err)
	}
	return srv.BlobURL(name)
}

// freePorts finds n ports free on loopback whose gRPC twins (port + 10000, as weed takes
// them) are free too, all below 55000.
func freePorts(n int) ([]int, error) {
	var ports []int
	seen := map[int]bool{}
	for tries := 0; len(ports) < n; tries++ {
		if tries > 200 {
			return nil, errors.New("s3test: no free ports below 55000")
		}
		p := 20000 + int(randomUint16())%35000
		if seen[p] || seen[p+10000] || !free(p) || !free(p+10000) {
			continue
		}
		seen[p], seen[p+10000] = true, true
		ports = append(ports, p)
	}
	return ports, nil
}

func free(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func randomUint16() uint16 {
	var b [2]byte
	rand.Read(b[:])
	return uint16(b[0])<<8 | uint16(b[1])
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
