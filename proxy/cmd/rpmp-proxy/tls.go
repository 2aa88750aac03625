// tls.go: TLS of rpmp-proxy, both directions (docs/security.md "Control plane"):
// the gRPC API it serves (--tls-cert/--tls-key/--tls-ca: mutual TLS, every client
// presents a certificate signed by --tls-ca) and its etcd client (--etcd-ca,
// --etcd-cert/--etcd-key). Without TLS the proxy runs in protected mode: loopback
// addresses only, unless --insecure.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc/credentials"
)

// tlsFiles names a CA bundle and a certificate with its key.
type tlsFiles struct{ ca, cert, key string }

func (f tlsFiles) empty() bool { return f.ca == "" && f.cert == "" && f.key == "" }

// loadCA reads a PEM bundle of CA certificates.
func loadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// serverCredentials is the gRPC server's mutual TLS: its own certificate, and
// client certificates required and verified against the CA.
func serverCredentials(f tlsFiles) (credentials.TransportCredentials, error) {
	cert, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	cas, err := loadCA(f.ca)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	return credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: cas,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}), nil
}

// etcdTLS is the etcd client's TLS (nil when no etcd TLS flag is given): the CA
// that signed etcd's certificate and, for etcd's --client-cert-auth, our own.
func etcdTLS(f tlsFiles) (*tls.Config, error) {
	if f.empty() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.ca != "" {
		cas, err := loadCA(f.ca)
		if err != nil {
			return nil, fmt.Errorf("--etcd-ca: %w", err)
		}
		c.RootCAs = cas
	}
	if f.cert != "" {
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("--etcd-cert/--etcd-key: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// isLoopback reports whether a listen address's host is a loopback address
// (an empty host, e.g. ":7070", means every interface).
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
