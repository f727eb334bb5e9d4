// bundle-validate runs operator-framework's bundle validators (github.com/operator-framework/api,
// the library behind `operator-sdk bundle validate` and `operator-verify`) on a bundle directory
// and prints what they found as JSON lines; it exits 1 when there is an error. operator-sdk
// itself is not served by the Go module proxy these machines use; its validators are.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
)

type finding struct {
	Level   string `json:"level"`
	Type    string `json:"type"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Object  string `json:"object"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bundle-validate <bundle dir>")
		os.Exit(2)
	}
	bundle, err := manifests.GetBundleFromDir(os.Args[1])
	if err != nil || bundle == nil {
		fmt.Fprintf(os.Stderr, "cannot read the bundle in %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	// What `operator-sdk bundle validate` runs by default, and the object checks it offers.
	validators := validation.DefaultBundleValidators.WithValidators(validation.ObjectValidator)
	failed := false
	out := json.NewEncoder(os.Stdout)
	for _, result := range validators.Validate(bundle.ObjectsToValidate()...) {
		for _, e := range result.Errors {
			failed = true
			_ = out.Encode(finding{"error", string(e.Type), e.Field, e.Error(), result.Name})
		}
		for _, w := range result.Warnings {
			_ = out.Encode(finding{"warning", string(w.Type), w.Field, w.Error(), result.Name})
		}
	}
	if failed {
		os.Exit(1)
	}
}
