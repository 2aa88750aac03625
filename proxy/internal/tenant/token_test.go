package tenant

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The vector the C++ side pins too (docs/security.md "Tenants").
const (
	vectorSecret = "test-cluster-secret"
	vectorToken  = "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000.7aa2e339ad1891068bc250c8fa21f34ce0a0657c3a54ce7baaf9d61d030c3157"
)

func vectorKey(t *testing.T) Key {
	k, err := DeriveKey([]byte(vectorSecret))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestTokenVector(t *testing.T) {
	k := vectorKey(t)
	if got := k.Mint("spark/app-1/", "app-1", 1893456000); got != vectorToken {
		t.Fatalf("Mint = %s, want %s", got, vectorToken)
	}
	tok, err := k.Verify(vectorToken, time.Unix(1893455999, 0))
	if err != nil || tok.Prefix != "spark/app-1/" || tok.App != "app-1" || tok.Expiry != 1893456000 {
		t.Fatalf("Verify = %+v, %v", tok, err)
	}
}

func TestVerifyRefusesTamperedExpiredAndForeign(t *testing.T) {
	k := vectorKey(t)
	before := time.Unix(1893455999, 0)
	if _, err := k.Verify(vectorToken, time.Unix(1893456000, 0)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("at expiry: want expired, got %v", err)
	}
	other, _ := DeriveKey([]byte("another-cluster-secret"))
	if _, err := other.Verify(vectorToken, before); err == nil {
		t.Fatal("a token of another cluster's secret verified")
	}
	// Another prefix under the same MAC, a later expiry, a flipped MAC digit.
	forged := []string{
		strings.Replace(vectorToken, "c3BhcmsvYXBwLTEv", b64.EncodeToString([]byte("spark/")), 1),
		strings.Replace(vectorToken, "1893456000", "1993456000", 1),
		vectorToken[:len(vectorToken)-1] + "0",
	}
	for _, f := range forged {
		if _, err := k.Verify(f, before); err == nil {
			t.Fatalf("forged token verified: %s", f)
		}
	}
	for _, bad := range []string{"", "v1", "v2.a.b.1.00", "v1.!!.YQ.1.00", "v1.YQ.YQ.-5." + strings.Repeat("00", 32),
		"v1.YQ.YQ.0123." + strings.Repeat("00", 32), "v1.YQ.YQ.5.00", "v1.YQ.YQ.5." + strings.Repeat("0", 64) + ".x"} {
		if _, err := Parse(bad); err != ErrMalformed {
			t.Fatalf("Parse(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secret")
	if err := os.WriteFile(p, []byte(vectorSecret+"\n \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSecretFile(p)
	if err != nil || string(s) != vectorSecret {
		t.Fatalf("ReadSecretFile = %q, %v", s, err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSecretFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("mode 0640: want refused, got %v", err)
	}
	short := filepath.Join(dir, "short")
	_ = os.WriteFile(short, []byte("short\n"), 0o600)
	if _, err := ReadSecretFile(short); err == nil {
		t.Fatal("a 5-byte secret was accepted")
	}
	if _, err := ReadSecretFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		prefix, ns string
		want       bool
	}{
		{"app-1/", "app-1/x", true}, {"app-1/", "app-1", true}, {"app-1/", "app-10", false},
		{"app-1/", "app-2/x", false}, {"*", "anything", true}, {"", "x", false},
	} {
		if got := Covers(c.prefix, c.ns); got != c.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", c.prefix, c.ns, got, c.want)
		}
	}
}
