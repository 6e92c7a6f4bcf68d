{{- define "plinth.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "plinth.fullname" -}}
{{- if contains (include "plinth.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "plinth.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "plinth.labels" -}}
app.kubernetes.io/name: {{ include "plinth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "plinth.selector" -}}
app.kubernetes.io/name: {{ include "plinth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The Secret's name: the one given, or the chart's own. */}}
{{- define "plinth.secretName" -}}
{{- default (include "plinth.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/* The keys of the Secret, sorted: the values given, or the existing Secret's listed keys. */}}
{{- define "plinth.secretKeys" -}}
{{- if .Values.existingSecret -}}
{{- toJson (sortAlpha .Values.existingSecretKeys) -}}
{{- else -}}
{{- toJson (sortAlpha (keys .Values.secrets)) -}}
{{- end -}}
{{- end -}}

{{/* Checks the values of the mode before anything renders. */}}
{{- define "plinth.validate" -}}
{{- if not (has .Values.mode (list "embedded" "scale-out")) -}}
{{- fail (printf "mode must be embedded or scale-out (got %q)" .Values.mode) -}}
{{- end -}}
{{- if eq .Values.mode "scale-out" -}}
{{- $keys := include "plinth.secretKeys" . | fromJsonArray -}}
{{- range $need := list "DATABASE_URL" "REDIS_URL" -}}
{{- if not (has $need $keys) -}}
{{- fail (printf "mode scale-out needs %s in the secrets (or existingSecretKeys): every replica shares one database and one Redis" $need) -}}
{{- end -}}
{{- end -}}
{{- if not .Values.config.S3_BUCKET -}}
{{- fail "mode scale-out needs config.S3_BUCKET (and S3 credentials in the secrets): files must be shared by every replica" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The pod template, shared by the StatefulSet (embedded) and the Deployment (scale-out). */}}
{{- define "plinth.podSpec" -}}
{{- $keys := include "plinth.secretKeys" . | fromJsonArray -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
# SIGTERM: Plinth drains its requests and stops its Postgres; 20 s is its own bound.
terminationGracePeriodSeconds: 30
containers:
  - name: plinth
    image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    ports:
      - name: http
        containerPort: 7130
    envFrom:
      - configMapRef:
          name: {{ include "plinth.fullname" . }}
    env:
      {{- range $keys }}
      - name: {{ . }}_FILE
        value: /run/secrets/plinth/{{ . }}
      {{- end }}
    # Liveness: the process answers. Readiness: the database, storage, disk and runtime do.
    livenessProbe:
      httpGet: { path: /api/health, port: http }
      periodSeconds: 10
      timeoutSeconds: 5
      failureThreshold: 6
    readinessProbe:
      httpGet: { path: "/api/health?checks=true", port: http }
      periodSeconds: 5
      timeoutSeconds: 5
      failureThreshold: 3
    # The first start creates the database cluster and migrates: up to 5 minutes.
    startupProbe:
      httpGet: { path: /api/health, port: http }
      periodSeconds: 5
      failureThreshold: 60
    resources:
      {{- if eq .Values.mode "embedded" }}
      {{- toYaml .Values.resources.embedded | nindent 6 }}
      {{- else }}
      {{- toYaml .Values.resources.scaleOut | nindent 6 }}
      {{- end }}
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: { drop: [ALL] }
    volumeMounts:
      - { name: data, mountPath: /data }
      - { name: tmp, mountPath: /tmp }
      {{- if $keys }}
      - { name: secrets, mountPath: /run/secrets/plinth, readOnly: true }
      {{- end }}
volumes:
  - name: tmp
    emptyDir: {}
  {{- if eq .Values.mode "scale-out" }}
  # scale-out: the database and files live elsewhere; DATA_DIR keeps caches and uploads in progress.
  - name: data
    emptyDir: {}
  {{- end }}
  {{- if $keys }}
  - name: secrets
    secret:
      secretName: {{ include "plinth.secretName" . }}
      defaultMode: 256 # 0400: read by the owner only
  {{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
