const app = document.getElementById('app');
if (app) app.textContent = 'ackcrawl';
