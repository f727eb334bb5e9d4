{{/*
Webhooks: the admission and conversion webhooks an operator serves over TLS. The operator keeps
its own CA and serving certificate in the Secret "<fullname>-webhook-tls" and injects the CA into
the configurations and CRDs below; the chart grants it exactly that (by name).
*/}}

{{- define "opkit-lib.v1.webhookServiceName" -}}
{{- printf "%s-webhook" (include "opkit-lib.v1.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The name the API server calls the webhooks by: webhook.url's host, or the Service's DNS name. */}}
{{- define "opkit-lib.v1.webhookHost" -}}
{{- if .Values.webhook.url }}
{{- (urlParse .Values.webhook.url).hostname }}
{{- else }}
{{- printf "%s.%s.svc" (include "opkit-lib.v1.webhookServiceName" .) .Release.Namespace }}
{{- end }}
{{- end }}

{{/* A webhook's clientConfig for a path. Call with (dict "ctx" $ "path" "/convert"). */}}
{{- define "opkit-lib.v1.webhookClientConfig" -}}
{{- $ := .ctx }}
{{- if $.Values.webhook.url }}
url: {{ printf "%s%s" (trimSuffix "/" $.Values.webhook.url) .path | quote }}
{{- else }}
service:
  name: {{ include "opkit-lib.v1.webhookServiceName" $ }}
  namespace: {{ $.Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- end }}
{{- end }}

{{/* The operator's flags for its webhook server (a chart with webhooks passes "webhooks" true to the Deployment). */}}
{{- define "opkit-lib.v1.webhookArgs" -}}
- --webhook-bind-address=:{{ .Values.webhook.port }}
- --webhook-secret-name={{ include "opkit-lib.v1.fullname" . }}-webhook-tls
- --webhook-host={{ include "opkit-lib.v1.webhookHost" . }}
- --webhook-configuration-name={{ include "opkit-lib.v1.fullname" . }}
{{- end }}

{{/*
The Secret the operator keeps its webhook CA and serving certificate in, made empty by the release
so that `helm uninstall` removes it; the operator fills it (helm's three-way merge leaves its data
alone on upgrade).
*/}}
{{- define "opkit-lib.v1.webhookSecret" -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}-webhook-tls
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
    app.kubernetes.io/component: webhook-certificates
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
type: Opaque
{{- end }}

{{/* The Service the API server calls the webhooks through: every ready replica serves them. */}}
{{- define "opkit-lib.v1.webhookService" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "opkit-lib.v1.webhookServiceName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
spec:
  type: ClusterIP
  selector:
    {{- include "opkit-lib.v1.selectorLabels" . | nindent 4 }}
  ports:
    - name: webhook
      port: 443
      targetPort: webhook
      protocol: TCP
{{- end }}

{{/*
What keeping the certificates needs: its Secret (by name; create cannot be limited to a name), and
update of the webhook configurations and CRDs it injects the CA into (by name); and what migrating
the storage of the converted kinds needs: list and update of every object of each, and the CRD's
status. Call with
(dict "ctx" $ "mutating" bool "validating" bool "crds" (list …)).
*/}}
{{- define "opkit-lib.v1.webhookRbac" -}}
{{- $ := .ctx }}
{{- if $.Values.rbac.create }}
{{- $fullname := include "opkit-lib.v1.fullname" $ }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}-webhook-certificates
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    resourceNames: ["{{ $fullname }}-webhook-tls"]
    verbs: ["get", "list", "watch", "update"]
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}-webhook-certificates
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}-webhook-certificates
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" $ }}
    namespace: {{ $.Release.Namespace }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-ca-injection
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
rules:
  {{- if .mutating }}
  - apiGroups: ["admissionregistration.k8s.io"]
    resources: ["mutatingwebhookconfigurations"]
    resourceNames: [{{ $fullname | quote }}]
    verbs: ["get", "list", "watch", "update"]
  {{- end }}
  {{- if .validating }}
  - apiGroups: ["admissionregistration.k8s.io"]
    resources: ["validatingwebhookconfigurations"]
    resourceNames: [{{ $fullname | quote }}]
    verbs: ["get", "list", "watch", "update"]
  {{- end }}
  {{- with .crds }}
  - apiGroups: ["apiextensions.k8s.io"]
    resources: ["customresourcedefinitions"]
    resourceNames: {{ toJson . }}
    verbs: ["get", "list", "watch", "update"]
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-ca-injection
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-ca-injection
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" $ }}
    namespace: {{ $.Release.Namespace }}
{{- with .crds }}
---
{{- /* Storage-version migration: every object of a converted kind rewritten (in every namespace:
       storage is cluster-wide), then the CRD's status.storedVersions trimmed. Under OLM too. */}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-storage-migration
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
rules:
  - apiGroups: ["apiextensions.k8s.io"]
    resources: ["customresourcedefinitions/status"]
    resourceNames: {{ toJson . }}
    verbs: ["update"]
  {{- range . }}
  {{- $crd := splitn "." 2 . }}
  - apiGroups: [{{ $crd._1 | quote }}]
    resources: [{{ $crd._0 | quote }}]
    verbs: ["list", "update"]
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-storage-migration
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-storage-migration
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" $ }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
{{- end }}
{{- end }}
