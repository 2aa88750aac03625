// pki_test.go: a throw-away certificate authority for the security tests, with
// crypto/x509: a CA, and certificates (files in a temp dir) for the proxy, etcd,
// storage nodes (OU=rpmp-node), applications and admins (OU=rpmp-admin), the same
// shapes deploy/local-cluster.sh makes with openssl.
package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA signs certificates into dir.
type testCA struct {
	t    *testing.T
	dir  string
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	File string // PEM of the CA certificate
}

// certFiles names a certificate and its key.
type certFiles struct{ Cert, Key string }

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{t: t, dir: t.TempDir(), key: key, cert: cert}
	ca.File = filepath.Join(ca.dir, "ca.crt")
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// issue signs a certificate for cn (OU ou, may be empty), usable as TLS server
// (for 127.0.0.1 and localhost) and client.
func (ca *testCA) issue(cn, ou string) certFiles {
	t := ca.t
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	subj := pkix.Name{CommonName: cn}
	if ou != "" {
		subj.OrganizationalUnit = []string{ou}
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subj,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	f := certFiles{Cert: filepath.Join(ca.dir, cn+".crt"), Key: filepath.Join(ca.dir, cn+".key")}
	writePEM(t, f.Cert, "CERTIFICATE", der)
	writePEM(t, f.Key, "PRIVATE KEY", kder)
	return f
}

// clientTLS is a TLS client config trusting ca and presenting f (if non-empty).
func (ca *testCA) clientTLS(f certFiles) *tls.Config {
	ca.t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if f.Cert != "" {
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			ca.t.Fatal(err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
