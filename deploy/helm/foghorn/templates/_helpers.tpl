{{/* Names and labels. */}}
{{- define "foghorn.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "foghorn.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "foghorn.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "foghorn.selectorLabels" -}}
app.kubernetes.io/name: {{ include "foghorn.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "foghorn.labels" -}}
helm.sh/chart: {{ include "foghorn.chart" . }}
{{ include "foghorn.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: foghorn
{{- end }}

{{- define "foghorn.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "foghorn.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "foghorn.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* FOGHORN_TRUST_PROXY: the value, else one hop (the ingress controller) behind an ingress. */}}
{{- define "foghorn.trustProxy" -}}
{{- if ne (toString .Values.trustProxy) "" }}
{{- toString .Values.trustProxy }}
{{- else if .Values.ingress.enabled }}
{{- "1" }}
{{- else }}
{{- "false" }}
{{- end }}
{{- end }}

{{/* The ingress's URL, for FOGHORN_PUBLIC_URL when the values set none. */}}
{{- define "foghorn.publicUrl" -}}
{{- if .Values.ingress.enabled }}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tlsSecretName "")) .Values.ingress.host }}
{{- end }}
{{- end }}

{{- define "foghorn.temporalTlsDir" -}}/etc/foghorn/temporal-tls{{- end }}
{{- define "foghorn.escalationDir" -}}/etc/foghorn/escalation{{- end }}
{{- define "foghorn.dataDir" -}}/var/lib/foghorn{{- end }}

{{/*
The plain environment of one process: the chart's settings, overridden by .Values.env, then by
the component's env. Built as one map so that no variable is defined twice.
Call with (dict "root" $ "component" "api").
*/}}
{{- define "foghorn.plainEnv" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $c := index $v .component }}
{{- $env := dict
  "TEMPORAL_ADDRESS" $v.temporal.address
  "TEMPORAL_NAMESPACE" $v.temporal.namespace
  "FOGHORN_TASK_QUEUE" $v.temporal.taskQueue
  "FOGHORN_DATA_DIR" (include "foghorn.dataDir" $root)
  "FOGHORN_AGENT_SHELL" "off"
}}
{{- /* The agent's shell sandbox needs root to switch users (domain/shell-sandbox.ts); these pods run as uid 1000. */}}
{{- if $v.temporal.uiUrl }}
{{- $_ := set $env "FOGHORN_TEMPORAL_UI_URL" $v.temporal.uiUrl }}
{{- end }}
{{- if $v.temporal.tls.enabled }}
{{- $dir := include "foghorn.temporalTlsDir" $root }}
{{- $_ := set $env "TEMPORAL_TLS_CERT_PATH" (printf "%s/%s" $dir $v.temporal.tls.certKey) }}
{{- $_ := set $env "TEMPORAL_TLS_KEY_PATH" (printf "%s/%s" $dir $v.temporal.tls.keyKey) }}
{{- if $v.temporal.tls.caKey }}
{{- $_ := set $env "TEMPORAL_TLS_CA_PATH" (printf "%s/%s" $dir $v.temporal.tls.caKey) }}
{{- end }}
{{- if $v.temporal.tls.serverName }}
{{- $_ := set $env "TEMPORAL_TLS_SERVER_NAME" $v.temporal.tls.serverName }}
{{- end }}
{{- end }}
{{- if or $v.escalation.existingConfigMap $v.escalation.existingSecret }}
{{- $_ := set $env "FOGHORN_ESCALATION_FILE" (printf "%s/%s" (include "foghorn.escalationDir" $root) $v.escalation.key) }}
{{- end }}
{{- with include "foghorn.publicUrl" $root }}
{{- $_ := set $env "FOGHORN_PUBLIC_URL" . }}
{{- end }}
{{- if eq .component "api" }}
{{- $_ := set $env "FOGHORN_API_ADDR" (printf ":%d" (int $c.port)) }}
{{- $_ := set $env "FOGHORN_TRUST_PROXY" (include "foghorn.trustProxy" $root) }}
{{- end }}
{{- if eq .component "gateway" }}
{{- $_ := set $env "FOGHORN_WEBHOOK_ADDR" (printf ":%d" (int $c.port)) }}
{{- $_ := set $env "FOGHORN_WEBHOOK_PATH" $c.webhookPath }}
{{- $_ := set $env "FOGHORN_TRUST_PROXY" (include "foghorn.trustProxy" $root) }}
{{- end }}
{{- $env = merge (deepCopy ($c.env | default dict)) (deepCopy ($v.env | default dict)) $env }}
{{- range $name := keys $env | sortAlpha }}
- name: {{ $name }}
  value: {{ index $env $name | toString | quote }}
{{- end }}
{{- end }}

{{/* Secrets as environment variables: required keys fail the pod's start when missing, optional ones are skipped. */}}
{{- define "foghorn.secretEnv" -}}
{{- $v := .Values }}
{{- $required := dict "FOGHORN_ADMIN_TOKEN" $v.secrets.keys.adminToken "FOGHORN_AUDIT_KEY" $v.secrets.keys.auditKey "FOGHORN_SECRET_KEY" $v.secrets.keys.secretKey }}
{{- $optional := dict "FOGHORN_AUDIT_RETIRED_KEYS" $v.secrets.keys.auditRetiredKeys "FOGHORN_SECRET_RETIRED_KEYS" $v.secrets.keys.secretRetiredKeys "FOGHORN_WEBHOOK_SECRET" $v.secrets.keys.webhookSecret "FOGHORN_LLM_API_KEY" $v.secrets.keys.llmApiKey "FOGHORN_STT_API_KEY" $v.secrets.keys.sttApiKey }}
- name: MONGODB_URI
  valueFrom:
    secretKeyRef:
      name: {{ $v.mongodb.existingSecret }}
      key: {{ $v.mongodb.uriKey }}
{{- range $name := keys $required | sortAlpha }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.secrets.existingSecret }}
      key: {{ index $required $name }}
{{- end }}
{{- range $name := keys $optional | sortAlpha }}
{{- with index $optional $name }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.secrets.existingSecret }}
      key: {{ . }}
      optional: true
{{- end }}
{{- end }}
{{- if $v.temporal.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $v.temporal.apiKey.existingSecret }}
      key: {{ $v.temporal.apiKey.key }}
{{- end }}
{{- end }}

{{/* One of Foghorn's Deployments. Call with (dict "root" $ "component" "api" "args" (list "api") "kubeAccess" false). */}}
{{- define "foghorn.deployment" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $c := index $v .component }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "foghorn.fullname" $root }}-{{ .component }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "foghorn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  replicas: {{ $c.replicas }}
  selector:
    matchLabels:
      {{- include "foghorn.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
  template:
    metadata:
      labels:
        {{- include "foghorn.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "foghorn.serviceAccountName" $root }}
      # Only the worker talks to the cluster (the watcher, evidence, actions); the API and the gateway get no token.
      automountServiceAccountToken: {{ .kubeAccess }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $v.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .component }}
          image: {{ include "foghorn.image" $root }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          args:
            {{- toYaml .args | trim | nindent 12 }}
          {{- if $c.port }}
          ports:
            - name: http
              containerPort: {{ $c.port }}
              protocol: TCP
          {{- end }}
          env:
            {{- include "foghorn.plainEnv" (dict "root" $root "component" .component) | trim | nindent 12 }}
            {{- include "foghorn.secretEnv" $root | trim | nindent 12 }}
          {{- with $c.startupProbe }}
          startupProbe:
            {{- toYaml . | trim | nindent 12 }}
          {{- end }}
          {{- with $c.readinessProbe }}
          readinessProbe:
            {{- toYaml . | trim | nindent 12 }}
          {{- end }}
          {{- with $c.livenessProbe }}
          livenessProbe:
            {{- toYaml . | trim | nindent 12 }}
          {{- end }}
          {{- with $c.resources }}
          resources:
            {{- toYaml . | trim | nindent 12 }}
          {{- end }}
          securityContext:
            {{- toYaml $v.securityContext | trim | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            - name: data
              mountPath: {{ include "foghorn.dataDir" $root }}
            {{- if $v.temporal.tls.enabled }}
            - name: temporal-tls
              mountPath: {{ include "foghorn.temporalTlsDir" $root }}
              readOnly: true
            {{- end }}
            {{- if or $v.escalation.existingConfigMap $v.escalation.existingSecret }}
            - name: escalation
              mountPath: {{ include "foghorn.escalationDir" $root }}
              readOnly: true
            {{- end }}
      volumes:
        # The root filesystem is read-only: scratch files (transcription) and the data directory
        # (the audit checkpoint's mirror) live in the pod.
        - name: tmp
          emptyDir: {}
        - name: data
          emptyDir: {}
        {{- if $v.temporal.tls.enabled }}
        - name: temporal-tls
          secret:
            secretName: {{ $v.temporal.tls.existingSecret }}
            defaultMode: 0440
        {{- end }}
        {{- if $v.escalation.existingSecret }}
        - name: escalation
          secret:
            secretName: {{ $v.escalation.existingSecret }}
            defaultMode: 0440
        {{- else if $v.escalation.existingConfigMap }}
        - name: escalation
          configMap:
            name: {{ $v.escalation.existingConfigMap }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/* A PodDisruptionBudget for a component run with more than one replica. */}}
{{- define "foghorn.pdb" -}}
{{- $root := .root }}
{{- $c := index $root.Values .component }}
{{- if and $c.pdb.enabled (gt (int $c.replicas) 1) }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "foghorn.fullname" $root }}-{{ .component }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "foghorn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  maxUnavailable: {{ $c.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "foghorn.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}

{{/* A ClusterIP (or other type) Service in front of a component's http port. */}}
{{- define "foghorn.service" -}}
{{- $root := .root }}
{{- $c := index $root.Values .component }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "foghorn.fullname" $root }}-{{ .component }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "foghorn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  {{- with $c.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $c.service.type }}
  selector:
    {{- include "foghorn.selectorLabels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  ports:
    - name: http
      port: {{ $c.service.port }}
      targetPort: http
      protocol: TCP
{{- end }}
