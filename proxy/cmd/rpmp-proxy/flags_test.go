// flags_test.go: unit tests of rpmp-proxy's flag validation.
package main

import (
	"io"
	"strings"
	"testing"
)

func TestWildcardListenNeedsAdvertise(t *testing.T) {
	base := []string{"--etcd", "http://127.0.0.1:2379", "--insecure"}
	for _, listen := range []string{"0.0.0.0:7070", "[::]:7070", ":7070"} {
		_, err := parseFlags(append([]string{"--listen", listen}, base...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "wildcard") || !strings.Contains(err.Error(), "--advertise") {
			t.Errorf("--listen %s without --advertise: want an error naming --advertise, got %v", listen, err)
		}
		o, err := parseFlags(append([]string{"--listen", listen, "--advertise", "10.0.0.10:7070"}, base...), io.Discard)
		if err != nil || o.advertise != "10.0.0.10:7070" {
			t.Errorf("--listen %s --advertise 10.0.0.10:7070: want accepted, got %v", listen, err)
		}
	}
	for _, adv := range []string{"0.0.0.0:7070", "[::]:7070", "proxy1", "proxy1:0", ":7070"} {
		_, err := parseFlags(append([]string{"--listen", "10.0.0.10:7070", "--advertise", adv}, base...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--advertise") {
			t.Errorf("--advertise %s: want refused, got %v", adv, err)
		}
	}
	if _, err := parseFlags([]string{"--listen", "127.0.0.1:0", "--etcd", "http://127.0.0.1:2379"}, io.Discard); err != nil {
		t.Errorf("loopback listen without --advertise: want accepted, got %v", err)
	}
}
