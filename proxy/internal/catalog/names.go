// names.go: namespace names without cloning records (quota accounting).
package catalog

import "strings"

// Names returns the names of the namespaces that start with start, unsorted.
func (c *Catalog) Names(start string) []string {
	var out []string
	for name := range c.namespaces {
		if strings.HasPrefix(name, start) {
			out = append(out, name)
		}
	}
	return out
}
