{{/*
Secured metrics (metrics.secure, on by default, as kubebuilder scaffolds): /metrics and
/debug/queue over HTTPS, to callers whose bearer token the API server authenticates (TokenReview)
and authorizes for GET on the path (SubjectAccessReview). The operator may ask those questions;
"<fullname>-metrics-reader" is the role to bind to whoever scrapes (Prometheus' ServiceAccount).
*/}}
{{- define "opkit-lib.v1.metricsRbac" -}}
{{- if and .Values.rbac.create .Values.metrics.enabled .Values.metrics.secure }}
{{- $fullname := include "opkit-lib.v1.fullname" . }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-metrics-auth
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
rules:
  - apiGroups: ["authentication.k8s.io"]
    resources: ["tokenreviews"]
    verbs: ["create"]
  - apiGroups: ["authorization.k8s.io"]
    resources: ["subjectaccessreviews"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-metrics-auth
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-metrics-auth
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-metrics-reader
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
rules:
  - nonResourceURLs: ["/metrics", "/debug/queue"]
    verbs: ["get"]
{{- with .Values.metrics.readers }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-metrics-reader
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-metrics-reader
subjects:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}
