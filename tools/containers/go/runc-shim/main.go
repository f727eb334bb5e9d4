// runc-shim runs the real runc after removing, from the container's OCI spec, the Linux
// capabilities this machine withholds from its processes.
//
// Why: dockerd grants a --privileged container every capability the kernel knows. On a VM whose
// capability bounding set lacks one (these Firecracker VMs withhold CAP_SYS_RESOURCE), runc then
// fails with "unable to apply caps: operation not permitted", so no privileged container (and so
// no kind node) can start. dockerd runs this shim as its default runtime; for `create`/`run` it
// edits the bundle's config.json, for `exec` the --process file, and then execs runc unchanged.
//
// Its own flags come first (dockerd's runtimeArgs) and are consumed here:
//
//	--opkit-runc=/usr/sbin/runc        the runc to exec
//	--opkit-drop-caps=CAP_A,CAP_B      the capabilities to remove
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
)

func main() {
	realRunc := "runc"
	var drop []string
	args := []string{}
	for _, a := range os.Args[1:] {
		switch {
		case strings.HasPrefix(a, "--opkit-runc="):
			realRunc = strings.TrimPrefix(a, "--opkit-runc=")
		case strings.HasPrefix(a, "--opkit-drop-caps="):
			drop = strings.Split(strings.TrimPrefix(a, "--opkit-drop-caps="), ",")
		default:
			args = append(args, a)
		}
	}
	if len(drop) > 0 {
		if err := edit(args, drop); err != nil {
			fmt.Fprintf(os.Stderr, "opkit runc-shim: %v\n", err)
			os.Exit(1)
		}
	}
	argv := append([]string{realRunc}, args...)
	if err := syscall.Exec(realRunc, argv, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "opkit runc-shim: exec %s: %v\n", realRunc, err)
		os.Exit(1)
	}
}

// runc's global flags that take a separate value.
var globalWithValue = map[string]bool{"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true}

// edit finds the command and the file it reads the process from, and rewrites that file.
func edit(args []string, drop []string) error {
	command, bundle, process := "", "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(name string) (string, bool) {
			if a == name && i+1 < len(args) {
				i++
				return args[i], true
			}
			if strings.HasPrefix(a, name+"=") {
				return strings.TrimPrefix(a, name+"="), true
			}
			return "", false
		}
		if v, ok := value("--bundle"); ok {
			bundle = v
		} else if v, ok := value("-b"); ok {
			bundle = v
		} else if v, ok := value("--process"); ok {
			process = v
		} else if v, ok := value("-p"); ok {
			process = v
		} else if command == "" && globalWithValue[a] {
			i++ // the value of a global flag (runc --root <dir> create …) is not the command
		} else if command == "" && !strings.HasPrefix(a, "-") {
			command = a
		}
	}
	switch command {
	case "create", "run":
		if bundle == "" {
			bundle = "."
		}
		return rewrite(bundle+"/config.json", drop, func(doc map[string]any) map[string]any {
			p, _ := doc["process"].(map[string]any)
			return p
		})
	case "exec":
		if process == "" {
			return nil // exec with the process given as arguments: runc derives it from the spec, already edited
		}
		return rewrite(process, drop, func(doc map[string]any) map[string]any { return doc })
	}
	return nil
}

// rewrite removes the capabilities from every set of the process found in the JSON file.
func rewrite(path string, drop []string, processOf func(map[string]any) map[string]any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	proc := processOf(doc)
	if proc == nil {
		return nil
	}
	caps, _ := proc["capabilities"].(map[string]any)
	if caps == nil {
		return nil
	}
	changed := false
	for set, list := range caps {
		items, _ := list.([]any)
		kept := make([]any, 0, len(items))
		for _, c := range items {
			if s, _ := c.(string); contains(drop, s) {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
