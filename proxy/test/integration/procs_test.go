// procs_test.go: helpers that run REAL processes for the integration tests:
// an etcd binary on free loopback ports in a temp dir, and the rpmp-proxy
// binary built once by TestMain. Everything binds to 127.0.0.1 only.
package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

var proxyBin string // built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rpmp-proxy-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	proxyBin = filepath.Join(dir, "rpmp-proxy")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-o", proxyBin, "rpmp.io/proxy/cmd/rpmp-proxy")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building rpmp-proxy:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freePort returns a currently free TCP port on 127.0.0.1.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// eventually polls cond every 50ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %v waiting for: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond) // poll interval, not synchronization
	}
}

// logBuf collects a process's output for failure reports.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// etcdProc is a single-member etcd running from the Debian binary.
type etcdProc struct {
	t          *testing.T
	dir        string
	clientPort int
	peerPort   int
	cmd        *exec.Cmd
	log        *logBuf
	// With ca set, etcd serves https with server cert and requires client
	// certificates signed by ca (--client-cert-auth); clientCert is ours.
	ca                     *testCA
	serverCert, clientCert certFiles
}

func etcdBinary(t *testing.T) string {
	if p, err := exec.LookPath("etcd"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/etcd"); err == nil {
		return "/usr/bin/etcd"
	}
	t.Skip("etcd binary not installed (apt-get install etcd-server)")
	return ""
}

// startEtcd starts etcd on fresh loopback ports; it is killed at test end.
func startEtcd(t *testing.T) *etcdProc { return startEtcdWith(t, nil) }

// startEtcdTLS starts etcd with TLS and client-certificate authentication.
func startEtcdTLS(t *testing.T, ca *testCA) *etcdProc { return startEtcdWith(t, ca) }

func startEtcdWith(t *testing.T, ca *testCA) *etcdProc {
	e := &etcdProc{t: t, dir: t.TempDir(), clientPort: freePort(t), peerPort: freePort(t), ca: ca}
	if ca != nil {
		e.serverCert, e.clientCert = ca.issue("etcd-server", ""), ca.issue("etcd-client", "")
	}
	e.start()
	t.Cleanup(func() {
		e.kill()
		if t.Failed() {
			t.Logf("etcd log tail:\n%s", tail(e.log.String(), 3000))
		}
	})
	return e
}

func (e *etcdProc) URL() string {
	if e.ca != nil {
		return fmt.Sprintf("https://127.0.0.1:%d", e.clientPort)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", e.clientPort)
}

// proxyFlags are the rpmp-proxy flags reaching this etcd (TLS ones if any).
func (e *etcdProc) proxyFlags() []string {
	if e.ca == nil {
		return nil
	}
	return []string{"--etcd-ca", e.ca.File, "--etcd-cert", e.clientCert.Cert, "--etcd-key", e.clientCert.Key}
}

// start (re)starts etcd on the same ports and data dir and waits for it.
func (e *etcdProc) start() {
	t := e.t
	peer := fmt.Sprintf("http://127.0.0.1:%d", e.peerPort)
	e.log = &logBuf{}
	e.cmd = exec.Command(etcdBinary(t), "--name", "t", "--data-dir", filepath.Join(e.dir, "data"),
		"--listen-client-urls", e.URL(), "--advertise-client-urls", e.URL(),
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "t="+peer,
		"--log-outputs", "stderr", "--logger", "zap")
	if e.ca != nil {
		e.cmd.Args = append(e.cmd.Args, "--cert-file", e.serverCert.Cert, "--key-file", e.serverCert.Key,
			"--client-cert-auth", "--trusted-ca-file", e.ca.File)
	}
	e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	cli := e.client()
	defer cli.Close()
	eventually(t, 15*time.Second, "etcd answers", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := cli.Get(ctx, "probe")
		return err == nil
	})
}

// kill sends SIGKILL and reaps the process.
func (e *etcdProc) kill() {
	if e.cmd != nil && e.cmd.Process != nil {
		_ = e.cmd.Process.Kill()
		_ = e.cmd.Wait()
		e.cmd = nil
	}
}

// client returns an etcd client for direct inspection.
func (e *etcdProc) client() *clientv3.Client {
	cfg := clientv3.Config{Endpoints: []string{e.URL()}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()}
	if e.ca != nil {
		cfg.TLS = e.ca.clientTLS(e.clientCert)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return cli
}

// proxyProc is a running rpmp-proxy binary.
type proxyProc struct {
	t    *testing.T
	Addr string
	cmd  *exec.Cmd
	log  *logBuf
	// exited is closed once the process has been reaped; exitErr is then set.
	exited  chan struct{}
	exitErr error
}

// testProxyFlags are fast timings for tests.
var testProxyFlags = []string{"--session-ttl", "2", "--suspect-after", "600ms", "--heartbeat-timeout", "1500ms",
	"--heartbeat-interval", "200ms", "--ttl-check", "200ms", "--op-timeout", "1s"}

var listenRE = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// startProxy runs rpmp-proxy on a random loopback port against etcdURL.
func startProxy(t *testing.T, etcdURL string, extra ...string) *proxyProc {
	t.Helper()
	args := append([]string{"--listen", "127.0.0.1:0", "--etcd", etcdURL, "--cluster", "test"}, testProxyFlags...)
	p := &proxyProc{t: t, log: &logBuf{}, exited: make(chan struct{})}
	p.cmd = exec.Command(proxyBin, append(args, extra...)...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start proxy: %v", err)
	}
	addr := make(chan string, 1)
	go p.scan(stderr, addr)
	select {
	case p.Addr = <-addr:
	case <-time.After(15 * time.Second):
		p.kill()
		t.Fatalf("proxy did not report its address; log:\n%s", p.log.String())
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() || os.Getenv("RPMP_TEST_LOGS") != "" {
			t.Logf("proxy %s log:\n%s", p.Addr, tail(p.log.String(), 6000))
		}
	})
	return p
}

// scan copies the proxy's stderr into its log and reports the address.
func (p *proxyProc) scan(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.log.Write([]byte(line + "\n"))
		if m := listenRE.FindStringSubmatch(line); m != nil {
			addr <- m[1]
		}
	}
	p.exitErr = p.cmd.Wait()
	close(p.exited)
}

// kill sends SIGKILL (if still running) and waits for exit.
func (p *proxyProc) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		p.wait(5 * time.Second)
	}
}

// term sends SIGTERM and returns the exit error (nil = exit 0).
func (p *proxyProc) term(timeout time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait(timeout)
}

func (p *proxyProc) wait(timeout time.Duration) error {
	select {
	case <-p.exited:
		return p.exitErr
	case <-time.After(timeout):
		p.t.Fatalf("proxy %s did not exit within %v", p.Addr, timeout)
		return nil
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
