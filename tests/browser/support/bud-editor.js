// bud-editor: drives the Assistants page's bud dialog the way a person does — open it from the
// navigation, fill name, system prompt, provider and model — for the tests that need a bud made
// through the UI (the editors' own test, the model picker's).

/** Opens the Assistants page from the navigation and its "+ New assistant" dialog, once the providers are listed. */
export async function openNewBudDialog(page) {
  await page.locator('nav').getByRole('link', { name: 'Assistants' }).click();
  await page.getByRole('heading', { name: 'Assistants' }).waitFor();
  await page.getByRole('button', { name: '+ New assistant' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByLabel('Provider').locator('option').first().waitFor({ state: 'attached' });
  return dialog;
}

/**
 * Fills the dialog's basic fields; `provider` is an option's label pattern (a RegExp) or left
 * as the default, `model` a model name or left empty (the provider's default).
 */
export async function fillBudForm(dialog, { name, systemPrompt = '', provider = null, model = null }) {
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('System prompt').fill(systemPrompt);
  if (provider) {
    const option = dialog.getByLabel('Provider').locator('option', { hasText: provider });
    await option.waitFor({ state: 'attached' });
    await dialog.getByLabel('Provider').selectOption(await option.getAttribute('value'));
  }
  if (model) await dialog.getByLabel('Model').fill(model);
}

/** Creates a bud through the dialog; resolves to its card on the Assistants page. */
export async function createBudInEditor(page, fields) {
  const dialog = await openNewBudDialog(page);
  await fillBudForm(dialog, fields);
  await dialog.getByRole('button', { name: 'Create assistant' }).click();
  await dialog.waitFor({ state: 'detached' });
  const card = page.locator(`.bud-card[data-bud-name="${fields.name}"]`);
  await card.waitFor();
  return card;
}
