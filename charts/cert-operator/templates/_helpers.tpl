{{/* A Prometheus duration in days or hours ("21d", "36h") as seconds, for arithmetic on timestamps. */}}
{{- define "cert-operator.seconds" -}}
{{- if hasSuffix "d" . }}{{ mul (trimSuffix "d" . | int) 86400 }}{{ else }}{{ mul (trimSuffix "h" . | int) 3600 }}{{ end }}
{{- end }}
