// The docs page's only script of its own (a file, not inline: the page's Content-Security-Policy
// runs no inline script): Swagger UI rendering /openapi.yaml. BaseLayout, without the standalone
// top bar: its logo carries an inline <style> the policy refuses, and its box loads other specs.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.yaml",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
