// The API reference: swagger-ui (bundled from npm, served from this origin) over the served OpenAPI document.
window.SwaggerUIBundle({
  url: '/api/v1/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  // No call to swagger.io's online validator: the page works offline and sends nothing elsewhere.
  validatorUrl: null,
  tryItOutEnabled: false,
  defaultModelsExpandDepth: 0,
});
