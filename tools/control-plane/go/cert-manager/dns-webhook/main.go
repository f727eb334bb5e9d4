// A DNS-01 webhook solver as every cert-manager DNS webhook is built: cert-manager's own webhook
// server framework (pkg/acme/webhook/cmd, an aggregated API server serving ChallengePayload) around
// a solver, here cert-manager's own RFC 2136 solver (pkg/issuer/acme/dns/rfc2136, the one its
// conformance suite runs as a webhook). Both are cert-manager's code, unchanged; this file only
// names the API group, as webhook-example's main.go does (that module is not served by the Go
// module proxy, nor is any third-party DNS webhook tried). The cert operator's test reaches it
// through the API server's aggregation layer exactly as cert-manager's controller does.
//
// Flags are the generic API server's (--secure-port, --tls-cert-file, --kubeconfig,
// --authentication-kubeconfig, --authorization-kubeconfig…); the group comes from GROUP_NAME, as
// in webhook-example.
package main

import (
	"fmt"
	"os"

	"github.com/cert-manager/cert-manager/pkg/acme/webhook/cmd"
	"github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/rfc2136"
)

func main() {
	group := os.Getenv("GROUP_NAME")
	if group == "" {
		fmt.Fprintln(os.Stderr, "GROUP_NAME must name the API group this solver serves (e.g. acme.example.com)")
		os.Exit(1)
	}
	cmd.RunWebhookServer(group, rfc2136.New())
}
