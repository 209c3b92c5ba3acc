import { ERRORS, LatchError } from '@latch/shared'
import { en } from '@latch/shared/i18n'
import { TABLES } from '@latch/shared/i18n/all'
import { enScreens } from '@latch/shared/i18n/screens'
import { afterEach, expect, test } from 'vitest'
import { checkHostConfig } from '../startup/config-check.ts'
import { addEnglish, applyLocale, locale, setTable, shownError, t, tf } from './i18n.ts'

afterEach(() => {
  setTable({ ...enScreens, ...en }, 'en')
  document.documentElement.lang = 'en'
  document.documentElement.dir = ''
})

test('behavior: English needs no chunk: the landing texts are there at once', async () => {
  await applyLocale({}, ['en-GB', 'ja'])
  expect(locale()).toBe('en')
  expect(t('title')).toBe('Log in or sign up')
  expect(shownError(ERRORS.invalid_email.message)).toBe(ERRORS.invalid_email.message)
})

test('behavior: the browser languages pick the locale; its texts, its error texts, lang and dir', async () => {
  await applyLocale({}, ['xx', 'ja-JP', 'en'])
  expect(locale()).toBe('ja')
  expect(t('title')).toBe(TABLES.ja.m.title)
  expect(tf('digit', { n: 2, total: 6 })).toBe('6桁中2桁目')
  expect(shownError(ERRORS.invalid_email.message)).toBe(TABLES.ja.e.invalid_email)
  // The passkey errors a screen shows (PASSKEY_SCREEN, the wallet's passkey recovery).
  expect(shownError(ERRORS.passkey_failed.message)).toBe(TABLES.ja.e.passkey_failed)
  expect(shownError(ERRORS.passkey_not_initialized.message)).toBe(
    TABLES.ja.e.passkey_not_initialized,
  )
  // A message the table does not translate stays as it is.
  expect(shownError('Something only the server says')).toBe('Something only the server says')
  expect(document.documentElement.lang).toBe('ja')
  expect(document.documentElement.dir).toBe('ltr')
  // The screens' English arriving later does not replace the locale's texts.
  addEnglish(enScreens)
  expect(t('codeTitle')).toBe(TABLES.ja.m.codeTitle)
})

test('param: the host locale wins over the browser; Arabic is right to left', async () => {
  await applyLocale({ locale: 'ar' }, ['de-DE'])
  expect(locale()).toBe('ar')
  expect(t('submit')).toBe(TABLES.ar.m.submit)
  expect(document.documentElement.dir).toBe('rtl')
})

test('behavior: the host texts override a key in the locale shown, English included', async () => {
  await applyLocale({ texts: { en: { title: 'Welcome to Shop' }, fr: { submit: 'Valider' } } }, [
    'en-US',
  ])
  expect(t('title')).toBe('Welcome to Shop')
  expect(t('submit')).toBe('Submit')
  // English for the other keys, including the screens' once they arrive.
  addEnglish(enScreens)
  expect(t('codeTitle')).toBe('Enter confirmation code')
  await applyLocale({ texts: { fr: { submit: 'Valider' } } }, ['fr-FR'])
  expect(t('submit')).toBe('Valider')
  expect(t('title')).toBe(TABLES.fr.m.title)
})

test('error: texts that are not strings are refused as invalid_data', async () => {
  const refused = applyLocale({ texts: { en: { title: 42 as unknown as string } } }, ['en'])
  await expect(refused).rejects.toBeInstanceOf(LatchError)
  await expect(refused).rejects.toMatchObject({ code: 'invalid_data' })
})

test('param: an unshipped host locale falls back to English', async () => {
  await applyLocale({ locale: 'xx-YY' }, ['ja'])
  expect(locale()).toBe('en')
  expect(t('title')).toBe('Log in or sign up')
})

test('error: a host locale that is not a language tag is refused at init', async () => {
  await expect(checkHostConfig({ locale: 'ja JP; drop' })).rejects.toMatchObject({
    code: 'invalid_data',
  })
  expect((await checkHostConfig({ locale: 'pt-BR' })).config.locale).toBe('pt-BR')
  // The texts reach the modal as the host wrote them (checked where they are used, above).
  expect((await checkHostConfig({ texts: { ja: { title: 'ようこそ' } } })).config.texts).toEqual({
    ja: { title: 'ようこそ' },
  })
})
