// Starts Swagger UI on this server's /openapi.json: no validator badge (it would call a remote service), keys kept for the session only.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: true,
  persistAuthorization: false,
  displayRequestDuration: true
})
