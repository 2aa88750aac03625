// secret.go: reads the cluster secret for --token-secret-file with the servers'
// rules (common/auth.cc LoadSecretFile): the file is the owner's alone (no group
// or other bits), trailing whitespace is dropped, at least 16 bytes remain.
// Called once at proxy start-up.
package tenant

import (
	"bytes"
	"fmt"
	"os"
)

// ReadSecretFile returns the secret in path, or an error a person can act on.
func ReadSecretFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the secret file '%s': %w", path, err)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return nil, fmt.Errorf("the secret file '%s' is open to its group or other users (mode %04o; chmod 600 it)",
			path, mode)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the secret file '%s': %w", path, err)
	}
	data = bytes.TrimRight(data, "\n\r \t")
	if len(data) < 16 {
		return nil, fmt.Errorf("the secret in '%s' is empty or shorter than 16 bytes", path)
	}
	return data, nil
}
