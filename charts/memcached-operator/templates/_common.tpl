{{/* Copied from charts/_common by tools/charts/sync-common.mjs. Edit it there, not here. */}}
{{/* Names and labels */}}
{{- define "opkit.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "opkit.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "opkit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "opkit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "opkit.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "opkit.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: opkit
{{- end }}

{{- define "opkit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "opkit.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "opkit.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "opkit.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{- define "opkit.leaseName" -}}
{{- printf "%s-leader" (include "opkit.name" .) }}
{{- end }}

{{/* Fails rendering on combinations that cannot work, with a message saying why. */}}
{{- define "opkit.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true: replicas would reconcile the same objects at once" }}
{{- end }}
{{- end }}

{{/* ServiceAccount */}}
{{- define "opkit.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "opkit.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: true
{{- end }}
{{- end }}

{{/*
RBAC: exactly the rules the controllers declare (the chart's "<chart>.rules" template, generated
from code). Cluster-wide by default; with watchNamespaces, a Role and RoleBinding in each watched
namespace, plus a ClusterRole for cluster-scoped kinds the operator reads (its "<chart>.clusterRules"
template, when it has one).
*/}}
{{- define "opkit.rbac" -}}
{{- if .Values.rbac.create }}
{{- $fullname := include "opkit.fullname" . }}
{{- $rules := include (printf "%s.rules" .Chart.Name) . }}
{{- if not .Values.watchNamespaces }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- else }}
{{- range $ns := .Values.watchNamespaces }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}
  namespace: {{ $ns }}
  labels:
    {{- include "opkit.labels" $ | nindent 4 }}
rules:
  {{- include (printf "%s.namespacedRules" $.Chart.Name) $ | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}
  namespace: {{ $ns }}
  labels:
    {{- include "opkit.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit.serviceAccountName" $ }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
{{- $clusterRules := include (printf "%s.clusterRules" .Chart.Name) . | trim }}
{{- if $clusterRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-cluster
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
rules:
  {{- $clusterRules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-cluster
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-cluster
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The leader-election Lease, made by the release rather than by the operator: `helm uninstall`
removes it with everything else. The operator only writes its holder fields; helm's three-way
merge leaves those alone on upgrade.
*/}}
{{- define "opkit.leaderElectionLease" -}}
{{- if .Values.leaderElection.enabled }}
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: {{ include "opkit.leaseName" . }}
  namespace: {{ include "opkit.leaderElectionNamespace" . }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
{{- end }}
{{- end }}

{{/* The leader-election Role: this operator's Lease only, in the leader-election namespace. */}}
{{- define "opkit.leaderElectionRbac" -}}
{{- if and .Values.rbac.create .Values.leaderElection.enabled }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "opkit.fullname" . }}-leader-election
  namespace: {{ include "opkit.leaderElectionNamespace" . }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: [{{ include "opkit.leaseName" . | quote }}]
    verbs: ["get", "update", "patch"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["create"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "opkit.fullname" . }}-leader-election
  namespace: {{ include "opkit.leaderElectionNamespace" . }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "opkit.fullname" . }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end }}

{{/*
The operator's Deployment. Pass "extraArgs" (a list) and "extraEnv" (a list of EnvVar) for the
operator's own flags and settings.
*/}}
{{- define "opkit.deployment" -}}
{{- $ := .ctx }}
{{- include "opkit.validate" $ }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "opkit.fullname" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit.labels" $ | nindent 4 }}
spec:
  replicas: {{ $.Values.replicaCount }}
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      {{- include "opkit.selectorLabels" $ | nindent 6 }}
  strategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        {{- include "opkit.selectorLabels" $ | nindent 8 }}
        {{- with $.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        kubectl.kubernetes.io/default-container: manager
        {{- with $.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "opkit.serviceAccountName" $ }}
      {{- with $.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml $.Values.podSecurityContext | nindent 8 }}
      # SIGTERM drains in-flight reconciles (up to 30 s) and releases the lease.
      terminationGracePeriodSeconds: 40
      containers:
        - name: manager
          image: {{ include "opkit.image" $ | quote }}
          imagePullPolicy: {{ $.Values.image.pullPolicy }}
          args:
            - --metrics-bind-address=:{{ $.Values.metrics.port }}
            - --health-probe-bind-address=:{{ $.Values.probes.port }}
            - --log-level={{ $.Values.logLevel }}
            - --log-format={{ $.Values.logFormat }}
            {{- if $.Values.leaderElection.enabled }}
            - --leader-elect
            - --leader-election-namespace={{ include "opkit.leaderElectionNamespace" $ }}
            - --leader-election-id={{ include "opkit.leaseName" $ }}
            {{- end }}
            {{- range .extraArgs }}
            - {{ . | quote }}
            {{- end }}
            {{- range $.Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            # With POD_NAME, the leader-election identity: stable across container restarts.
            - name: POD_UID
              valueFrom:
                fieldRef:
                  fieldPath: metadata.uid
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            - name: WATCH_NAMESPACE
              value: {{ join "," $.Values.watchNamespaces | quote }}
            {{- with .extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: {{ $.Values.metrics.port }}
              protocol: TCP
            - name: probes
              containerPort: {{ $.Values.probes.port }}
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: probes
            initialDelaySeconds: 15
            periodSeconds: 20
          readinessProbe:
            httpGet:
              path: /readyz
              port: probes
            initialDelaySeconds: 5
            periodSeconds: 10
          resources:
            {{- toYaml $.Values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        # The root filesystem is read-only; a small scratch directory for anything that insists.
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
      {{- with $.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/* The metrics Service (Prometheus scrapes it directly or through the ServiceMonitor). */}}
{{- define "opkit.metricsService" -}}
{{- if .Values.metrics.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "opkit.fullname" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "opkit.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ .Values.metrics.port }}
      targetPort: metrics
      protocol: TCP
{{- end }}
{{- end }}

{{/* A ServiceMonitor, only where the Prometheus operator's API exists (or when forced). */}}
{{- define "opkit.serviceMonitor" -}}
{{- $sm := .Values.metrics.serviceMonitor }}
{{- if and .Values.metrics.enabled $sm.enabled }}
{{- if or (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") $sm.force }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "opkit.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit.labels" . | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "opkit.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ $sm.interval }}
{{- end }}
{{- end }}
{{- end }}
