// chat: driving the chat page the way a person does, shared by the browser tests.

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

/** Asks `question` in a new conversation on `origin`'s chat page; resolves to the new answer's element. */
export async function askInNewConversation(page, origin, question) {
  await page.goto(`${origin}/#/chat`);
  await page.getByRole('button', { name: '+ New conversation' }).click();
  await page.fill('#chat-input', question);
  await page.keyboard.press('Enter');
  const turn = page.locator('.message-assistant').last();
  await turn.waitFor();
  return turn;
}
