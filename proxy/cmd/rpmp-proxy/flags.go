// flags.go: command-line parsing and validation for rpmp-proxy.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

type options struct {
	listen, advertise, cluster string
	metricsListen              string
	etcd                       []string
	heartbeatTimeout           time.Duration
	suspectAfter               time.Duration
	heartbeatInterval          time.Duration
	ttlCheck                   time.Duration
	etcdTimeout                time.Duration
	opTimeout                  time.Duration
	sessionTTL                 int
	vnodes                     int
	tls, etcdTLS               tlsFiles // tls.go
	insecure                   bool     // serve a non-loopback address without TLS
	tokenSecretFile            string   // cluster secret: issue per-application credentials
	claimGrace                 time.Duration
}

// parseFlags parses args (without the program name).
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var etcd string
	fs := flag.NewFlagSet("rpmp-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "", "HOST:PORT to serve gRPC on (port 0 = pick one)")
	fs.StringVar(&o.advertise, "advertise", "", "HOST:PORT other hosts dial for this proxy, written to etcd for the leader (default: the bound listen address; required when --listen is a wildcard such as 0.0.0.0)")
	fs.StringVar(&o.metricsListen, "metrics-listen", "", "HOST:PORT to serve Prometheus metrics on at /metrics (empty = off; port 0 = pick one)")
	fs.StringVar(&etcd, "etcd", "", "etcd endpoints, comma separated (e.g. http://127.0.0.1:2379)")
	fs.StringVar(&o.cluster, "cluster", "default", "cluster name; state lives under /rpmp/<cluster>/")
	fs.DurationVar(&o.heartbeatTimeout, "heartbeat-timeout", 3*time.Second, "a node silent this long is DEAD")
	fs.DurationVar(&o.suspectAfter, "suspect-after", 1500*time.Millisecond, "a node silent this long is SUSPECT")
	fs.DurationVar(&o.heartbeatInterval, "heartbeat-interval", 500*time.Millisecond, "heartbeat period told to storage servers")
	fs.DurationVar(&o.ttlCheck, "ttl-check", time.Second, "how often namespace TTLs are checked")
	fs.DurationVar(&o.etcdTimeout, "etcd-timeout", 10*time.Second, "give up starting if etcd is unreachable this long")
	fs.DurationVar(&o.opTimeout, "op-timeout", 2*time.Second, "timeout of one etcd operation")
	fs.IntVar(&o.sessionTTL, "session-ttl", 3, "leader session (lease) TTL in seconds")
	fs.IntVar(&o.vnodes, "vnodes", 64, "virtual nodes per storage node on the hash ring")
	fs.StringVar(&o.tls.cert, "tls-cert", "", "PEM certificate of this proxy's gRPC API (with --tls-key and --tls-ca: mutual TLS)")
	fs.StringVar(&o.tls.key, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&o.tls.ca, "tls-ca", "", "PEM CA bundle that client certificates must chain to (required with --tls-cert)")
	fs.BoolVar(&o.insecure, "insecure", false, "without TLS, serve a non-loopback --listen address anyway (anyone reaching it may administer the cluster)")
	fs.StringVar(&o.etcdTLS.ca, "etcd-ca", "", "PEM CA bundle to verify etcd's certificate (https:// endpoints)")
	fs.StringVar(&o.etcdTLS.cert, "etcd-cert", "", "PEM client certificate presented to etcd (--client-cert-auth)")
	fs.StringVar(&o.etcdTLS.key, "etcd-key", "", "PEM private key of --etcd-cert")
	fs.StringVar(&o.tokenSecretFile, "token-secret-file", "", "cluster secret file (the servers' --auth-secret-file, mode 0600): "+
		"issue per-application credentials (IssueCredential); without it none are issued")
	fs.DurationVar(&o.claimGrace, "claim-grace", 2*time.Minute, "an application's prefix claim outlives its credential's expiry this long")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	for _, e := range strings.Split(etcd, ",") {
		if e = strings.TrimSpace(e); e != "" {
			o.etcd = append(o.etcd, e)
		}
	}
	return o, o.validate()
}

// validate checks the option values against each other.
func (o options) validate() error {
	switch {
	case o.listen == "":
		return errors.New("--listen HOST:PORT is required")
	case len(o.etcd) == 0:
		return errors.New("--etcd URL[,URL] is required")
	case o.cluster == "" || strings.ContainsAny(o.cluster, "/\x00"):
		return fmt.Errorf("--cluster %q must be non-empty without '/'", o.cluster)
	case o.suspectAfter <= 0 || o.heartbeatTimeout <= 0 || o.heartbeatInterval <= 0 || o.ttlCheck <= 0:
		return errors.New("durations must be positive")
	case o.suspectAfter >= o.heartbeatTimeout:
		return fmt.Errorf("--suspect-after (%v) must be shorter than --heartbeat-timeout (%v)", o.suspectAfter, o.heartbeatTimeout)
	case o.heartbeatInterval >= o.suspectAfter:
		return fmt.Errorf("--heartbeat-interval (%v) must be shorter than --suspect-after (%v)", o.heartbeatInterval, o.suspectAfter)
	case o.sessionTTL < 1:
		return fmt.Errorf("--session-ttl must be >= 1 second, got %d", o.sessionTTL)
	case o.vnodes < 1:
		return fmt.Errorf("--vnodes must be >= 1, got %d", o.vnodes)
	case o.claimGrace < 0:
		return errors.New("--claim-grace must not be negative")
	case o.etcdTimeout <= 0 || o.opTimeout <= 0:
		return errors.New("--etcd-timeout and --op-timeout must be positive")
	case !o.tls.empty() && (o.tls.cert == "" || o.tls.key == "" || o.tls.ca == ""):
		return errors.New("--tls-cert, --tls-key and --tls-ca go together (mutual TLS)")
	case (o.etcdTLS.cert == "") != (o.etcdTLS.key == ""):
		return errors.New("--etcd-cert and --etcd-key go together")
	case o.tls.empty() && !o.insecure && !isLoopback(o.listen):
		return fmt.Errorf("refusing to listen on %s without TLS (protected mode): set --tls-cert, --tls-key "+
			"and --tls-ca, or pass --insecure to serve it unauthenticated", o.listen)
	case o.advertise == "" && isWildcard(o.listen):
		return fmt.Errorf("--listen %s is a wildcard address, which other hosts cannot dial: set --advertise to "+
			"this host's address that storage servers and clients reach (e.g. --advertise proxy1.example:7070), "+
			"or --listen on that address", o.listen)
	case o.advertise != "" && !validAdvertise(o.advertise):
		return fmt.Errorf("--advertise %q must be HOST:PORT with a host other hosts can dial (not a wildcard) and a non-zero port",
			o.advertise)
	}
	return nil
}

// isWildcard reports whether a listen address's host means every interface
// (empty, 0.0.0.0, ::): such an address cannot be advertised as it is.
func isWildcard(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

// validAdvertise reports whether an --advertise value is HOST:PORT that another
// host can dial.
func validAdvertise(hostport string) bool {
	_, port, err := net.SplitHostPort(hostport)
	return err == nil && !isWildcard(hostport) && port != "" && port != "0"
}
