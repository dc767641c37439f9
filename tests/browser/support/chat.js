// chat: what page tests do in the Chat page the way a person does.

/** Sends `question` from the composer and waits until its answer has finished; resolves to the answer's turn. */
export async function askAndWait(page, question, { timeout = 30000 } = {}) {
  const before = await page.locator('.message-assistant').count();
  await page.fill('#chat-input', question);
  await page.keyboard.press('Enter');
  const turn = page.locator('.message-assistant').nth(before);
  await turn.waitFor();
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout });
  return turn;
}
